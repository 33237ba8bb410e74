"""Through run_turn, in an isolating sandbox: no attack command is approved automatically;
the user is asked, and the approval's reason names the refused option. A read-only command
still runs without asking, in the read-only view.

(make_deps pretends the isolation level: nothing here runs a command, every question is
answered "deny", and the read-only run is refused by the subprocess sandbox.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from co_tui.protocol.frontend import DENIED_MESSAGE, ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, tool_returns

# command -> the option or operator the reason must name
ATTACKS = {
    "git diff --output=victim.txt": "`--output`",
    "tree -o README.md": "`-o`",
    "git branch -D feature": "`-D`",
    "rg --pre rm . victim.txt": "`--pre`",
    "rg --pre sh . s.sh": "`--pre`",
    "git log -1 --format='#!/bin/sh%ntouch X%n' --output=s.sh": "`--output`",
    "git -c core.fsmonitor='touch PWNED' status": "`-c`",
    "git diff --outp=victim.txt": "`--outp`",
    "tree -ofile": "`-o`",
    "date -s 2020-01-01": "`-s`",
    "file -C -m magic": "`-C`",
    "rg -z foo": "`-z`",
    "ls; touch victim.txt": "`;`",
}


async def run(cmd: str, tmp_path: Path, isolation: str = "namespace") -> RecordingFrontend:
    model = ScriptedModel([Call("run_shell_command", {"cmd": cmd}, "c1")], ["done"])
    frontend = RecordingFrontend([ApprovalDecision.DENY])
    deps = make_deps(tmp_path, isolation=isolation)
    result = await run_turn(
        make_bundle(model.model).agent, "go", deps=deps, history=[], frontend=frontend
    )
    assert result.ok and result.output == "done"
    return frontend


@pytest.mark.parametrize("cmd", list(ATTACKS))
async def test_attack_is_not_auto_approved_and_the_reason_names_it(
    cmd: str, tmp_path: Path
) -> None:
    frontend = await run(cmd, tmp_path)
    [request] = frontend.approval_requests  # the user was asked
    assert request.args == {"cmd": cmd}
    assert "not run automatically" in request.reason and ATTACKS[cmd] in request.reason
    [record] = frontend.of("approval")
    assert (record.decision, record.read_only) == ("deny", False)
    assert ATTACKS[cmd] in record.reason
    [result] = frontend.of("tool_result")
    assert result.status == "denied" and result.content == DENIED_MESSAGE


async def test_read_only_command_runs_without_asking_in_the_read_only_view(
    tmp_path: Path,
) -> None:
    frontend = await run("git log --oneline -1", tmp_path)
    assert frontend.approval_requests == []
    [record] = frontend.of("approval")
    assert (record.decision, record.read_only) == ("auto", True)
    assert record.reason == "read-only command (git log)"


async def test_read_only_command_asks_without_a_sandbox(tmp_path: Path) -> None:
    frontend = await run("git log --oneline -1", tmp_path, isolation="none")
    [request] = frontend.approval_requests
    assert "read-only commands run without asking only in a sandbox" in request.reason
    [record] = frontend.of("approval")
    assert record.decision == "deny"


async def test_the_model_is_told_the_call_was_denied(tmp_path: Path) -> None:
    model = ScriptedModel(
        [Call("run_shell_command", {"cmd": "git diff --output=victim.txt"}, "c1")], ["ok"]
    )
    deps = make_deps(tmp_path, isolation="namespace")
    frontend = RecordingFrontend([ApprovalDecision.DENY])
    await run_turn(make_bundle(model.model).agent, "go", deps=deps, history=[], frontend=frontend)
    [denied] = tool_returns(model.seen[-1])
    assert denied.outcome == "denied" and denied.content == DENIED_MESSAGE
    assert not (tmp_path / "victim.txt").exists()
