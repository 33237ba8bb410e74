"""A running command's output reaches the front end while it runs: each backend tells its
listener the output as it comes (all of it, past the kept limit), and the shell tool turns
it into `ToolOutput` events between the call and its result."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.protocol import events as ev
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.sandbox.base import OutputCollector
from co_tui.tools.live_output import LINE_CHARS, OutputTail
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle
from tests.sandbox.conftest import make_sandbox

# Prints a line, then waits until the test has seen it (the file `go` appears), then another.
WAITS_FOR_GO = "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second"

BACKENDS = [
    "subprocess",
    pytest.param("bwrap", marks=pytest.mark.bwrap),
    pytest.param("docker", marks=pytest.mark.docker),
]


def backend(kind: str, workspace: Path, request: pytest.FixtureRequest, **kw: Any) -> Any:
    if kind == "subprocess":
        return SubprocessSandbox(workspace, **kw)
    return make_sandbox(kind, workspace, request, **kw)


@pytest.mark.parametrize("kind", BACKENDS)
async def test_output_is_told_while_the_command_still_runs(
    kind: str, workspace: Path, request: pytest.FixtureRequest
) -> None:
    sandbox = backend(kind, workspace, request)
    told: list[str] = []
    first_seen = asyncio.Event()

    def listen(text: str) -> None:
        told.append(text)
        if "first" in "".join(told):
            first_seen.set()

    run = asyncio.create_task(sandbox.run_command(WAITS_FOR_GO, timeout=30, on_output=listen))
    try:
        await asyncio.wait_for(first_seen.wait(), 20)
        assert not run.done(), "the command cannot have ended: it waits for `go`"
        (workspace / "go").touch()
        result = await asyncio.wait_for(run, 20)
    finally:
        run.cancel()
        await sandbox.cleanup()
    assert result.exit_code == 0
    assert "".join(told) == result.output == "first\nsecond\n"


@pytest.mark.parametrize("kind", BACKENDS)
async def test_all_output_is_told_though_the_result_keeps_only_its_start(
    kind: str, workspace: Path, request: pytest.FixtureRequest
) -> None:
    sandbox = backend(kind, workspace, request, output_limit=100)
    told: list[str] = []
    try:
        result = await sandbox.run_command("seq 1 2000", timeout=30, on_output=told.append)
    finally:
        await sandbox.cleanup()
    assert result.truncated
    assert "".join(told).splitlines()[-1] == "2000"  # the live tail goes on past the limit


def test_a_character_split_between_two_reads_is_told_whole() -> None:
    told: list[str] = []
    collector = OutputCollector(1000, told.append)
    encoded = "ünï\x00".encode()
    for byte in encoded:
        collector.feed(bytes([byte]))
    assert "".join(told) == "ünï\ufffd"  # a NUL never leaves the sandbox as itself
    assert collector.text() == "ünï\ufffd"


@pytest.mark.parametrize("kind", BACKENDS)
async def test_the_shell_tool_streams_its_last_lines_between_call_and_result(
    kind: str, workspace: Path, request: pytest.FixtureRequest
) -> None:
    cmd = "for i in 1 2 3 4 5 6 7; do echo line $i; sleep 0.05; done"
    model = ScriptedModel([Call("run_shell_command", {"cmd": cmd}, "call-1")], ["done"])
    sandbox = backend(kind, workspace, request)
    deps = create_deps(Settings(), workspace, sandbox_choice=SandboxChoice(sandbox, "test"))
    frontend = RecordingFrontend([ApprovalDecision.APPROVE])
    try:
        result = await run_turn(
            make_bundle(model.model).agent, "count", deps=deps, history=[], frontend=frontend
        )
    finally:
        await sandbox.cleanup()
    assert result.ok, result.error
    names = frontend.names()
    outputs: list[ev.ToolOutput] = frontend.of(ev.ToolOutput)
    assert outputs, names
    assert names.index("tool_call") < names.index("tool_output")
    assert max(i for i, n in enumerate(names) if n == "tool_output") < names.index("tool_result")
    assert {o.tool_call_id for o in outputs} == {"call-1"}
    assert outputs[-1].lines == tuple(f"line {i}" for i in range(3, 8))  # the last five


def tail_of(*chunks: str) -> tuple[str, ...]:
    tail = OutputTail()
    for chunk in chunks:
        tail.feed(chunk)
    return tail.lines


def test_the_tail_keeps_the_last_lines_the_unfinished_one_included() -> None:
    assert tail_of("a\nb\nc") == ("a", "b", "c")
    assert tail_of("a\nb\nc", "d") == ("a", "b", "cd")
    assert tail_of("\n".join(map(str, range(100)))) == ("95", "96", "97", "98", "99")
    assert tail_of("one\n", "\n", "three\n") == ("one", "", "three")


def test_a_progress_bar_shows_its_latest_state() -> None:
    assert tail_of("get 10%\r", "get 30%") == ("get 30%",)
    assert tail_of("get 10%\rget 20%\r") == ("get 20%",)  # until the next state comes
    assert tail_of("Downloading ", "50%\r", "Downloading 90%\r\n", "done") == (
        "Downloading 90%",
        "done",
    )


def test_a_line_without_end_stays_small() -> None:
    assert tail_of("x" * 1_000_000) == ("x" * LINE_CHARS,)
