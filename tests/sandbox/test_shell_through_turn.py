"""What the model asks for and the user approves is exactly what runs in the sandbox:
quotes, `$`, backslashes, newlines and unicode survive the trip model → approval → sandbox."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.sandbox import SandboxChoice
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, tool_returns
from tests.sandbox.conftest import make_sandbox

PAYLOAD = (
    "it's \"double\" and 'single' $HOME ${PATH} $(echo no) `echo no` \\n \\\\ back\\slash\n"
    "second line\ttab * ? [a] ~ # ; && || > < | &\n"
    "ünïcödé — 日本語 🎉 \u200b end"
)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
    ],
)
async def test_approved_command_runs_exactly(
    kind: str, workspace: Path, request: pytest.FixtureRequest
) -> None:
    cmd = (
        f"printf '%s' {shlex.quote(PAYLOAD)} > payload.txt\n"
        "printf '%s|' \"$((6*7))\" 'lit $x' > arith.txt"
    )
    model = ScriptedModel([Call("run_shell_command", {"cmd": cmd}, "call-1")], ["done"])
    sandbox = make_sandbox(kind, workspace, request)
    deps = create_deps(Settings(), workspace, sandbox_choice=SandboxChoice(sandbox, "test"))
    frontend = RecordingFrontend([ApprovalDecision.APPROVE])
    try:
        result = await run_turn(
            make_bundle(model.model).agent, "write it", deps=deps, history=[], frontend=frontend
        )
    finally:
        await sandbox.cleanup()
    assert result.ok, result.error
    assert [r.args for r in frontend.approval_requests] == [{"cmd": cmd}]
    assert (workspace / "payload.txt").read_text(encoding="utf-8") == PAYLOAD
    assert (workspace / "arith.txt").read_text() == "42|lit $x|"
    returns: list[Any] = tool_returns(result.messages)
    assert [r.content for r in returns] == ["(no output)"]
