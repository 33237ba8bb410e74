"""MCP servers from settings: probe-connected up front, attached to the agent, failures reported.

pydantic-ai connects toolsets when a run (or `async with agent:`) starts, so one server that
cannot start would fail every turn. Instead `connect_mcp_servers` connects each server on its
own with a timeout and keeps it entered for the session; only the ones that connected are
attached (`attach_mcp`), and the rest become `MCPFailure`s for the status bar and /status.
A tool whose prefixed name is taken (by a built-in tool, or by an earlier server's tool) is
left out of its server (`.filtered`) and reported as an `MCPFailure` naming the tool: two
tools with one name would make pydantic-ai fail every turn.

For the egress guard every MCP result is untrusted (fenced for the model, "mcp:<server>"),
and a server not marked `local` is outbound: with `approval: never` its calls still wait for
approval once private or untrusted content is in the conversation, and each call is
recorded as an egress span.

Usage (the app or headless entry point owns the connection's lifetime):

    connection = await connect_mcp_servers(settings, workspace)
    attach_mcp(bundle, connection)
    ...
    await connection.aclose()

Heavy imports (fastmcp, pydantic_ai.mcp) happen inside the functions: start-up stays fast
when no server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, WrapperToolset

from co_tui.config.paths import user_data_dir
from co_tui.config.settings import MCPServerConfig, Settings
from co_tui.protocol.tool_spec import ToolSpec, mcp_tool_spec

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from co_tui.agent.build import AgentBundle
    from co_tui.context.deps import CoDeps
    from co_tui.session.health import StatusRow

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
            await _close(server._raw, server._transport)
        self.servers = []


def tool_prefix(server_name: str) -> str:
    """Tool names allow [A-Za-z0-9_-]: a server named 'my.docs' prefixes its tools 'my_docs_'."""
    return _SAFE_NAME.sub("_", server_name) or "mcp"


def mcp_log_path(server_name: str) -> Path:
    """The server's stderr goes here, never to the terminal (it would draw over the TUI)."""
    return user_data_dir() / "logs" / f"mcp-{tool_prefix(server_name)}.log"


def _log_tail(path: Path, since: int) -> str:
    try:
        with path.open("rb") as log:
            log.seek(since)
            text = log.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return text[-_LOG_TAIL_CHARS:].replace("\n", " | ") if text else ""


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "did not answer in time"
    if isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions[0] if exc.exceptions else exc
        return _describe(inner)
    text = str(exc).strip() or type(exc).__name__
    return text.removeprefix("Client failed to connect: ")


async def _close(raw: Any, transport: Any) -> None:
    if raw is not None:
        with contextlib.suppress(BaseException):
            while getattr(raw, "_running_count", 0) > 0:
                await raw.__aexit__(None, None, None)
    if transport is not None:
        with contextlib.suppress(BaseException):
            await transport.close()


async def _connect_one(
    name: str, config: MCPServerConfig, workspace: Path | None, timeout: float
) -> MCPServerHandle | MCPFailure:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    from co_tui.safety.private_files import private_file

    log_path = private_file(mcp_log_path(name))  # 0600 in a 0700 folder, before stderr lands
    log_start = log_path.stat().st_size if log_path.exists() else 0
    transport = StdioTransport(
        config.command,
        list(config.args),
        env=dict(config.env) or None,
        cwd=str(workspace) if workspace else None,
        keep_alive=False,
        log_file=log_path,
    )
    raw: Any = MCPToolset(transport, id=f"mcp-{tool_prefix(name)}", init_timeout=timeout)
    try:
        async with asyncio.timeout(timeout):
            await raw.__aenter__()
            tools = await raw.list_tools()
    except (Exception, TimeoutError) as exc:
        await _close(raw, transport)
        tail = _log_tail(log_path, log_start)
        message = f"`{config.command}` failed to start: {_describe(exc)}"
        return MCPFailure(name, message + (f" (stderr: {tail})" if tail else ""))
    prefix = tool_prefix(name)
    toolset: Any = _GuardedToolset(raw, server=name, local=config.local).prefixed(prefix)
    if config.approval == "auto":
        toolset = toolset.approval_required()
    elif not config.local:
        toolset = toolset.approval_required(_egress_guard)
    original_names = {f"{prefix}_{t.name}": t.name for t in tools}
    return MCPServerHandle(
        name=name,
        prefix=prefix,
        toolset=toolset,
        tool_names=list(original_names),
        approval=config.approval == "auto",
        original_names=original_names,
        local=config.local,
        _raw=raw,
        _transport=transport,
    )


def _refuse_taken_names(server: MCPServerHandle, owners: dict[str, str]) -> list[MCPFailure]:
    """Leave out the server's tools whose names `owners` (name -> who has it) already holds;
    the rest are claimed for this server."""
    refused: list[MCPFailure] = []
    for name in server.tool_names:
        owner = owners.get(name)
        if owner is None:
            owners[name] = f"a tool of the MCP server '{server.name}'"
            continue
        original = server.original_names.get(name, name)
        message = f"its tool '{original}' is left out: `{name}` is already the name of {owner}"
        refused.append(MCPFailure(server.name, message, tool=name))
    if refused:
        names = {f.tool for f in refused}
        server.tool_names = [n for n in server.tool_names if n not in names]
        server.toolset = server.toolset.filtered(lambda _ctx, tool_def: tool_def.name not in names)
    return refused


async def connect_mcp_servers(
    settings: Settings, workspace: Path | None = None, *, timeout: float = CONNECT_TIMEOUT
) -> MCPConnection:
    """Start every configured server concurrently; one that fails is reported, not fatal."""
    if not settings.mcp_servers:
        return MCPConnection()
    names = list(settings.mcp_servers)
    results = await asyncio.gather(
        *(_connect_one(n, settings.mcp_servers[n], workspace, timeout) for n in names)
    )
    from co_tui.agent.build import builtin_tool_specs

    connection = MCPConnection()
    owners = dict.fromkeys(builtin_tool_specs(settings), "a built-in tool")
    for result in results:  # in settings order: the first server to name a tool keeps it
        if isinstance(result, MCPFailure):
            connection.failures.append(result)
        else:
            connection.servers.append(result)
            connection.failures.extend(_refuse_taken_names(result, owners))
    return connection


def _egress_guard(ctx: RunContext[CoDeps], tool_def: Any, tool_args: dict[str, Any]) -> bool:
    """An outbound server's call waits for approval when the egress guard holds it:
    untrusted content in the conversation, or private text in its arguments."""
    from co_tui.policy.egress_session import review_call

    return review_call(ctx, ctx.tool_name or tool_def.name, tool_args) is not None


CONNECTION_CLOSED = -32000  # JSON-RPC error code the MCP SDK uses when the server went away


def _connection_closed(exc: BaseException | None) -> bool:
    return getattr(exc, "code", None) == CONNECTION_CLOSED


@dataclass
class _GuardedToolset(WrapperToolset[Any]):
    """A server that dies mid-session turns its calls into an error result saying so, instead
    of a bare "Connection closed" retry prompt (or a failed turn)."""

    server: str = ""
    local: bool = False

    def _failed(self, exc: BaseException) -> dict[str, Any]:
        return {
            "display": f"The MCP server '{self.server}' failed: {_describe(exc)}. "
            "Its tools are unavailable for the rest of this session: do not call them again.",
            "error": True,
        }

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        import anyio
        from pydantic_ai import ModelRetry
        from pydantic_ai.mcp import MCPError

        try:
            if self.local:
                return await super().call_tool(name, tool_args, ctx, tool)
            return await self._sent(name, tool_args, ctx, tool)
        except ModelRetry as exc:
            if _connection_closed(exc.__cause__):
                return self._failed(exc.__cause__ or exc)
            raise
        except (MCPError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            return self._failed(exc)

    async def _sent(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        """The call, recorded as an egress span: it leaves this machine."""
        from co_tui.policy.egress_session import source_labels
        from co_tui.telemetry.tracing import traced_egress

        size = len(json.dumps(tool_args, ensure_ascii=False, default=str).encode())
        labels = functools.partial(source_labels, ctx)
        tool_name = ctx.tool_name or name
        with traced_egress(tool_name, f"mcp:{self.server}", size, labels) as egress:
            try:
                return await super().call_tool(name, tool_args, ctx, tool)
            except BaseException:
                egress.outcome("failed")
                raise


def attach_mcp(bundle: AgentBundle, connection: MCPConnection) -> None:
    """Add the connected servers' tools to the agent, and their specs to the bundle's."""
    if not connection.servers:
        return
    combined: AbstractToolset[Any] = CombinedToolset(connection.toolsets)

    def mcp_toolsets(ctx: RunContext[CoDeps]) -> AbstractToolset[Any]:
        return combined

    bundle.agent.toolset(mcp_toolsets, per_run_step=False)
    bundle.tool_specs.update((spec.name, spec) for spec in connection.tool_specs)


def failure_note(failure: MCPFailure) -> str:
    """One line for the transcript or stderr: a server that is down, or a tool left out."""
    if failure.tool is not None:
        return f"MCP server {failure.server}: {failure.message}"
    return f"MCP server {failure.server} is not available: {failure.message}"


def mcp_status_rows(settings: Settings, connection: MCPConnection | None) -> Sequence[StatusRow]:
    """Rows for /status and `co-tui status`: one per configured server."""
    from co_tui.session.health import StatusRow

    if not settings.mcp_servers:
        return [StatusRow("MCP servers", "none configured (mcp_servers in settings.json)", "off")]
    rows = [StatusRow("MCP servers", f"{len(settings.mcp_servers)} configured")]
    connected = {s.name: s for s in connection.servers} if connection else {}
    failures = connection.failures if connection else []
    failed = {f.server: f for f in failures if f.tool is None}
    for name in settings.mcp_servers:
        if name in connected:
            server = connected[name]
            how = "approval for every call" if server.approval else "no approval"
            how += ", local" if server.local else ""
            rows.append(StatusRow(f"  {name}", f"{len(server.tool_names)} tools ({how})"))
            rows.extend(
                StatusRow(f"    {f.tool}", f.message, "warn")
                for f in failures
                if f.server == name and f.tool is not None
            )
        elif name in failed:
            rows.append(StatusRow(f"  {name}", failed[name].message, "error"))
        else:
            rows.append(StatusRow(f"  {name}", "not connected in this process", "off"))
    return rows


def mcp_status_summary(connection: MCPConnection | None) -> str:
    """A few words for the status bar: '' when no server is configured."""
    if connection is None or not (connection.servers or connection.failures):
        return ""
    down = [f.server for f in connection.failures if f.tool is None]
    left_out = len(connection.failures) - len(down)
    text = f"MCP {len(connection.servers)}/{len(connection.servers) + len(down)}"
    if down:
        text += " (failed: " + ", ".join(down) + ")"
    if left_out:
        text += f" ({left_out} tool{'s' if left_out > 1 else ''} left out)"
    return text
