"""MCP servers from settings: a real stdio server (server_app.py) spawned by the app, its
tools called in turns with and without approval, broken servers reported, not fatal."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui.agent.build import AgentBundle, build_agent, builtin_tool_specs
from co_tui.agent.mcp import attach_mcp, connect_mcp_servers, mcp_status_summary
from co_tui.config.settings import Settings, WebPolicy
from co_tui.evals.runner import tool_definitions
from co_tui.integrations.mcp import MCPConnection, mcp_log_path
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.session.health import mcp_status_rows
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, tool_returns

SERVER_APP = Path(__file__).with_name("server_app.py")


def server(log: Path, approval: str = "never") -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER_APP), str(log)], "approval": approval}


def calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.fixture
async def connected(tmp_path: Path) -> AsyncIterator[tuple[Settings, MCPConnection, Path]]:
    log = tmp_path / "calls.jsonl"
    settings = Settings(
        mcp_servers={
            "demo": server(log, "never"),
            "guarded": server(log, "auto"),
            "broken": {"command": "/nonexistent/co-tui-mcp-server", "approval": "never"},
        }  # type: ignore[arg-type]
    )
    connection = await connect_mcp_servers(settings, tmp_path, timeout=20)
    yield settings, connection, log
    await connection.aclose()


async def turn(
    bundle: AgentBundle, tmp_path: Path, decisions: list[ApprovalDecision] | None = None
) -> tuple[Any, RecordingFrontend]:
    frontend = RecordingFrontend(decisions or [])
    deps = make_deps(tmp_path, Settings())
    result = await run_turn(bundle.agent, "go", deps=deps, history=[], frontend=frontend)
    return result, frontend


def bundle_calling(connection: MCPConnection, *calls_: Call) -> AgentBundle:
    bundle = make_bundle(ScriptedModel(list(calls_), ["done"]).model)
    attach_mcp(bundle, connection)
    return bundle


@pytest.mark.slow
async def test_broken_server_is_reported_and_the_rest_works(
    tmp_path: Path, connected: tuple[Settings, MCPConnection, Path]
) -> None:
    settings, connection, log = connected
    assert sorted(s.name for s in connection.servers) == ["demo", "guarded"]
    [failure] = connection.failures
    assert failure.server == "broken"
    assert "/nonexistent/co-tui-mcp-server" in failure.message
    assert "No such file" in failure.message

    # In one turn: an MCP tool (no approval) and a built-in tool both run.
    bundle = bundle_calling(
        connection,
        Call("demo_echo", {"text": "hello"}, "c1"),
        Call("load_skill", {"name": "git-commit-message"}, "c2"),
    )
    result, frontend = await turn(bundle, tmp_path)
    assert result.ok and result.output == "done"
    assert frontend.approval_requests == []
    returns = {p.tool_name: p.content for p in tool_returns(result.messages)}
    assert returns["demo_echo"] == "HELLO"
    assert returns["load_skill"]["skill"] == "git-commit-message"
    assert calls(log) == [{"tool": "echo", "args": {"text": "hello"}}]

    rows = {r.name.strip(): r for r in mcp_status_rows(settings, connection)}
    assert rows["MCP servers"].value == "3 configured"
    assert rows["demo"].value == "4 tools (no approval)" and rows["demo"].state == "ok"
    assert rows["guarded"].value == "4 tools (approval for every call)"
    assert rows["broken"].state == "error" and "failed to start" in rows["broken"].value
    assert mcp_status_summary(connection) == "MCP 2/3 (failed: broken)"


@pytest.mark.slow
async def test_tools_are_listed_by_server(
    connected: tuple[Settings, MCPConnection, Path],
) -> None:
    _, connection, _ = connected
    bundle = bundle_calling(connection)
    groups = bundle.tools_by_source()
    assert groups["mcp:demo"] == ["demo_echo", "demo_add", "demo_shell_command", "demo_crash"]
    assert groups["mcp:guarded"] == [
        "guarded_echo",
        "guarded_add",
        "guarded_shell_command",
        "guarded_crash",
    ]
    assert "web_fetch" in groups["web"] and "load_skill" in groups["skills"]
    assert "run_shell_command" in groups["built-in"]
    guarded_add = bundle.tool_specs["guarded_add"]
    assert guarded_add.source == "mcp:guarded" and guarded_add.requires_approval
    assert not bundle.tool_specs["demo_add"].requires_approval


async def test_approval_auto_denied_never_reaches_the_server(
    tmp_path: Path, connected: tuple[Settings, MCPConnection, Path]
) -> None:
    _, connection, log = connected
    bundle = bundle_calling(connection, Call("guarded_add", {"a": 2, "b": 3}, "c1"))
    result, frontend = await turn(bundle, tmp_path, [ApprovalDecision.DENY])
    [request] = frontend.approval_requests
    assert request.tool_name == "guarded_add" and request.args == {"a": 2, "b": 3}
    assert result.ok
    assert calls(log) == []


@pytest.mark.slow
async def test_approval_auto_approved_runs(
    tmp_path: Path, connected: tuple[Settings, MCPConnection, Path]
) -> None:
    _, connection, log = connected
    bundle = bundle_calling(connection, Call("guarded_add", {"a": 2, "b": 3}, "c1"))
    result, frontend = await turn(bundle, tmp_path, [ApprovalDecision.APPROVE])
    assert len(frontend.approval_requests) == 1
    [ret] = [p for p in tool_returns(result.messages) if p.tool_name == "guarded_add"]
    assert ret.content == 5
    assert calls(log) == [{"tool": "add", "args": {"a": 2, "b": 3}}]


@pytest.mark.slow
async def test_a_server_that_exits_or_hangs_is_reported(tmp_path: Path) -> None:
    settings = Settings(
        mcp_servers={
            "exits": {
                "command": sys.executable,
                "args": ["-c", "import sys; print('bad config', file=sys.stderr); sys.exit(3)"],
            },
            "hangs": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]},
        }  # type: ignore[arg-type]
    )
    start = time.monotonic()
    connection = await connect_mcp_servers(settings, tmp_path, timeout=1.0)
    assert time.monotonic() - start < 10
    failures = {f.server: f.message for f in connection.failures}
    assert connection.servers == []
    assert "stderr: bad config" in failures["exits"]
    assert "did not answer in time" in failures["hangs"]
    assert mcp_log_path("exits").read_text().strip() == "bad config"
    await connection.aclose()


async def test_no_servers_configured(tmp_path: Path) -> None:
    connection = await connect_mcp_servers(Settings(), tmp_path)
    assert connection.servers == [] and connection.failures == []
    assert mcp_status_summary(connection) == ""
    [row] = mcp_status_rows(Settings(), connection)
    assert row.state == "off"


@pytest.mark.slow
async def test_slash_tools_and_status_show_mcp_servers(
    tmp_path: Path, connected: tuple[Settings, MCPConnection, Path]
) -> None:
    from rich.console import Console

    from co_tui.session.commands.dispatch import dispatch
    from co_tui.session.commands.registry import CommandContext

    settings, connection, _ = connected
    bundle = bundle_calling(connection)
    deps = make_deps(tmp_path, settings)
    deps.mcp = connection
    shown: list[object] = []
    ctx = CommandContext([], deps, bundle, settings, shown.append)

    def rendered() -> str:
        console = Console(width=300, record=True)
        console.print(shown.pop())
        return console.export_text()

    assert (await dispatch(ctx, "/tools")).known
    tools = rendered()
    assert "mcp:demo     demo_echo, demo_add, demo_shell_command, demo_crash" in tools
    assert (
        "mcp:guarded  guarded_echo*, guarded_add*, guarded_shell_command*, guarded_crash*" in tools
    )
    lines = tools.splitlines()
    fetch = next(line for line in lines if "web_fetch" in line)
    assert fetch.split()[0] == "web" and "ready" in fetch
    search = next(line for line in lines if "web_search" in line)
    assert search.split()[:2] == ["Web", "search"] and "not configured" in search
    await dispatch(ctx, "/status")
    status = rendered()
    assert "MCP servers" in status and "3 configured" in status
    assert "broken" in status and "failed to start" in status


@pytest.mark.slow
async def test_a_server_dying_mid_session_fails_its_calls_not_the_turn(
    tmp_path: Path, connected: tuple[Settings, MCPConnection, Path]
) -> None:
    _, connection, log = connected
    bundle = bundle_calling(
        connection,
        Call("demo_crash", {}, "c1"),
        Call("demo_echo", {"text": "again"}, "c2"),
    )
    result, _ = await turn(bundle, tmp_path)
    assert result.ok and result.output == "done"
    returns = {p.tool_call_id: p.content for p in tool_returns(result.messages)}
    for call_id in ("c1", "c2"):
        assert isinstance(returns[call_id], dict), returns[call_id]
        assert returns[call_id]["error"] is True
        assert "The MCP server 'demo' failed" in returns[call_id]["display"]
    # The two calls run concurrently: echo may reach the server before it dies (it then
    # dies without answering echo, as the error above says).
    assert "crash" in [c["tool"] for c in calls(log)]


@pytest.mark.slow
async def test_a_dead_servers_call_shows_its_failure_in_the_transcript(
    tmp_path: Path, connected: tuple[Settings, MCPConnection, Path]
) -> None:
    _, connection, _ = connected
    result, frontend = await turn(
        bundle_calling(connection, Call("demo_crash", {}, "c1")), tmp_path
    )
    assert result.ok and result.output == "done"
    (shown,) = frontend.of("tool_result")
    assert shown.tool_name == "demo_crash" and shown.status == "failed"
    assert shown.display is not None
    assert shown.display.startswith("The MCP server 'demo' failed")
    assert "do not call them again" in shown.display


@pytest.mark.parametrize("fetch", ["allow", "ask", "deny"])
@pytest.mark.parametrize("search", ["allow", "deny"])
async def test_the_names_taken_by_built_ins_are_the_tools_the_agent_registers(
    tmp_path: Path, search: str, fetch: str
) -> None:
    """connect_mcp_servers reads the built-in names without building an agent."""
    settings = Settings(web_policy=WebPolicy(search=search, fetch=fetch))  # type: ignore[arg-type]
    bundle = build_agent(settings, model="test", instructions="", every_tool=True)
    registered = await tool_definitions(bundle.agent, make_deps(tmp_path))
    assert list(builtin_tool_specs(settings)) == bundle.tool_names
    assert set(bundle.tool_names) == set(registered)
    # Without every_tool the tools of integrations not set up are not offered, and their
    # names stay taken all the same (an MCP server never gets them).
    offered = await tool_definitions(
        build_agent(settings, model="test", instructions="").agent, make_deps(tmp_path)
    )
    assert set(offered) < set(registered)


@pytest.mark.slow
async def test_a_tool_whose_name_is_taken_is_left_out_and_the_rest_work(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    settings = Settings(
        mcp_servers={
            "run": server(log),  # its shell_command would be run_shell_command: a built-in
            "my.docs": server(log),  # prefix my_docs
            "my_docs": server(log),  # the same prefix: my.docs has every name already
        }  # type: ignore[arg-type]
    )
    connection = await connect_mcp_servers(settings, tmp_path, timeout=20)
    try:
        servers = {s.name: s for s in connection.servers}
        assert sorted(servers) == ["my.docs", "my_docs", "run"]
        assert servers["run"].tool_names == ["run_echo", "run_add", "run_crash"]
        assert servers["my_docs"].tool_names == []
        left_out = {(f.server, f.tool): f.message for f in connection.failures}
        assert left_out[("run", "run_shell_command")] == (
            "its tool 'shell_command' is left out: `run_shell_command` is already the name of "
            "a built-in tool"
        )
        assert sorted(tool for server_, tool in left_out if server_ == "my_docs") == [
            "my_docs_add",
            "my_docs_crash",
            "my_docs_echo",
            "my_docs_shell_command",
        ]
        assert "a tool of the MCP server 'my.docs'" in left_out[("my_docs", "my_docs_echo")]
        assert mcp_status_summary(connection) == "MCP 3/3 (5 tools left out)"
        rows = {r.name.strip(): r for r in mcp_status_rows(settings, connection)}
        assert rows["run"].value == "3 tools (no approval)"
        assert rows["run_shell_command"].state == "warn"

        offered: list[list[str]] = []
        model = ScriptedModel(
            [
                Call("run_shell_command", {"cmd": "echo built-in"}, "c1"),
                Call("run_echo", {"text": "hi"}, "c2"),
                Call("my_docs_add", {"a": 1, "b": 2}, "c3"),
            ],
            ["done"],
        )

        async def stream(messages: list[Any], info: AgentInfo) -> AsyncIterator[Any]:
            offered.append([t.name for t in info.function_tools])
            async for chunk in model._stream(messages, info):
                yield chunk

        bundle = make_bundle(FunctionModel(stream_function=stream))
        attach_mcp(bundle, connection)
        result, frontend = await turn(bundle, tmp_path, [ApprovalDecision.APPROVE])
        assert result.ok and result.output == "done"
        assert offered[0].count("run_shell_command") == 1
        assert "my_docs_add" in offered[0] and "run_echo" in offered[0]
        [request] = frontend.approval_requests  # the built-in shell tool asks; MCP's never ran
        assert request.tool_name == "run_shell_command"
        returns = {p.tool_call_id: p.content for p in tool_returns(result.messages)}
        assert returns == {"c1": "built-in", "c2": "HI", "c3": 3}
        assert sorted(c["tool"] for c in calls(log)) == ["add", "echo"]
        shell = bundle.tool_specs["run_shell_command"]
        assert shell.source == "built-in" and shell.requires_approval
    finally:
        await connection.aclose()
