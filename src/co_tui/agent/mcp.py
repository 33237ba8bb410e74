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
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai import ToolReturn
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, WrapperToolset

from co_tui.config.settings import MCPServerConfig, Settings
from co_tui.integrations.mcp import (
    CONNECT_TIMEOUT,
    MCPConnection,
    MCPFailure,
    MCPServerHandle,
    close_server,
    describe_failure,
    log_tail,
    mcp_log_path,
    tool_prefix,
)
from co_tui.tools.errors import terminal_error

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from co_tui.agent.build import AgentBundle
    from co_tui.context.deps import CoDeps


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
        await close_server(raw, transport)
        tail = log_tail(log_path, log_start)
        message = f"`{config.command}` failed to start: {describe_failure(exc)}"
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

    def _failed(self, exc: BaseException) -> ToolReturn:
        return terminal_error(
            f"The MCP server '{self.server}' failed: {describe_failure(exc)}. "
            "Its tools are unavailable for the rest of this session: do not call them again."
        )

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

    bundle.agent.toolset(per_run_step=False)(mcp_toolsets)
    bundle.tool_specs.update((spec.name, spec) for spec in connection.tool_specs)


def failure_note(failure: MCPFailure) -> str:
    """One line for the transcript or stderr: a server that is down, or a tool left out."""
    if failure.tool is not None:
        return f"MCP server {failure.server}: {failure.message}"
    return f"MCP server {failure.server} is not available: {failure.message}"


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
