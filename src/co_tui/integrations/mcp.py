"""MCP servers as this session holds them: each connected server's toolset and tool names,
what failed, and closing them. Connecting and attaching to the agent: agent/mcp.py.

Heavy imports (fastmcp, pydantic_ai.mcp) stay out of this module: start-up stays fast when
no server is configured.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.toolsets import AbstractToolset

from co_tui.config.paths import user_data_dir
from co_tui.protocol.tool_spec import ToolSpec, mcp_tool_spec

CONNECT_TIMEOUT = 15.0  # seconds for one server to start and answer initialize + tools/list
_LOG_TAIL_CHARS = 400
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class MCPFailure:
    """A configured server that is not available in this session or, when `tool` is set,
    one tool of a connected server that was refused (its prefixed name)."""

    server: str
    message: str
    tool: str | None = None


@dataclass
class MCPServerHandle:
    """A connected server: the toolset to attach and the (prefixed) names of its tools."""

    name: str
    prefix: str
    toolset: AbstractToolset[Any]
    tool_names: list[str]  # prefixed, as the model sees them
    approval: bool
    original_names: dict[str, str] = field(default_factory=dict)  # prefixed -> the server's
    local: bool = False  # sends nothing off this machine (not outbound for the egress guard)
    _raw: Any = field(repr=False, default=None)  # the entered MCPToolset
    _transport: Any = field(repr=False, default=None)

    @property
    def tool_specs(self) -> list[ToolSpec]:
        """Its tools as specs: "mcp:<server>", untrusted results, outbound unless local,
        every call asking first when the server is configured with approval: auto."""
        return [
            mcp_tool_spec(self.name, tool, local=self.local, approval=self.approval)
            for tool in self.tool_names
        ]


@dataclass
class MCPConnection:
    """The session's MCP servers (`CoDeps.mcp`): the connected ones and what failed."""

    servers: list[MCPServerHandle] = field(default_factory=list)
    failures: list[MCPFailure] = field(default_factory=list)

    @property
    def toolsets(self) -> list[AbstractToolset[Any]]:
        return [s.toolset for s in self.servers]

    @property
    def tool_specs(self) -> list[ToolSpec]:
        return [spec for server in self.servers for spec in server.tool_specs]

    async def aclose(self) -> None:
        """Disconnect every server and stop its process. Never raises."""
        for server in self.servers:
            await close_server(server._raw, server._transport)
        self.servers = []


def tool_prefix(server_name: str) -> str:
    """Tool names allow [A-Za-z0-9_-]: a server named 'my.docs' prefixes its tools 'my_docs_'."""
    return _SAFE_NAME.sub("_", server_name) or "mcp"


def mcp_log_path(server_name: str) -> Path:
    """The server's stderr goes here, never to the terminal (it would draw over the TUI)."""
    return user_data_dir() / "logs" / f"mcp-{tool_prefix(server_name)}.log"


def log_tail(path: Path, since: int) -> str:
    try:
        with path.open("rb") as log:
            log.seek(since)
            text = log.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return text[-_LOG_TAIL_CHARS:].replace("\n", " | ") if text else ""


def describe_failure(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "did not answer in time"
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return describe_failure(inner)
    text = str(exc).strip() or type(exc).__name__
    return text.removeprefix("Client failed to connect: ")


async def close_server(raw: Any, transport: Any) -> None:
    if raw is not None:
        with contextlib.suppress(BaseException):
            while getattr(raw, "_running_count", 0) > 0:
                await raw.__aexit__(None, None, None)
    if transport is not None:
        with contextlib.suppress(BaseException):
            await transport.close()
