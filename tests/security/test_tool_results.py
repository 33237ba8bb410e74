"""Honest tool results, through run_turn: a command that exits non-zero or times out is a
failed call (the model still sees its output and exit code); invalid arguments end as
errors the model sees and can correct, never as a failed turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, tool_returns


async def shell_turn(
    args: dict[str, Any], tmp_path: Path
) -> tuple[Any, RecordingFrontend, ScriptedModel]:
    model = ScriptedModel([Call("run_shell_command", args, "c1")], ["done"])
    frontend = RecordingFrontend(lambda _request: ApprovalDecision.APPROVE)
    result = await run_turn(
        make_bundle(model.model).agent,
        "go",
        deps=make_deps(tmp_path),
        history=[],
        frontend=frontend,
    )
    assert result.ok and result.output == "done", result.error  # the turn goes on
    return result, frontend, model


async def test_non_zero_exit_is_a_failed_call_with_its_output_and_exit_code(
    tmp_path: Path,
) -> None:
    _, frontend, model = await shell_turn({"cmd": "echo partial; exit 3"}, tmp_path)
    [shown] = frontend.of("tool_result")
    assert shown.status == "failed"
    assert shown.content == "partial\n[exit code 3]"
    [seen] = tool_returns(model.seen[-1])  # what the model got
    assert seen.outcome == "failed" and seen.content == "partial\n[exit code 3]"


async def test_a_timeout_is_a_failed_call(tmp_path: Path) -> None:
    _, frontend, _ = await shell_turn({"cmd": "echo started; sleep 30", "timeout": 1}, tmp_path)
    [shown] = frontend.of("tool_result")
    assert shown.status == "failed"
    assert shown.content.startswith("started\n[timed out after 1s")


async def test_exit_zero_is_ok(tmp_path: Path) -> None:
    _, frontend, model = await shell_turn({"cmd": "echo fine"}, tmp_path)
    [shown] = frontend.of("tool_result")
    assert (shown.status, shown.content) == ("ok", "fine")
    assert tool_returns(model.seen[-1])[0].outcome == "success"


async def test_a_nul_byte_is_an_error_the_model_sees(tmp_path: Path) -> None:
    _, frontend, model = await shell_turn({"cmd": "touch made\x00.txt"}, tmp_path)
    [seen] = tool_returns(model.seen[-1])
    assert seen.outcome == "retried" and "NUL byte" in str(seen.content)
    [shown] = frontend.of("tool_result")
    assert shown.status == "failed" and "NUL byte" in shown.content
    assert list(tmp_path.iterdir()) == []  # nothing ran


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"cmd": "echo hi", "timeout": "soon"}, "valid integer"),
        ({"cmd": "echo hi", "timeout": 2.5}, "valid integer"),
        ({"cmd": 5}, "valid string"),
        ({}, "Field required"),
        ({"cmd": "   "}, "The command is empty"),
    ],
)
async def test_invalid_arguments_are_errors_the_model_sees(
    args: dict[str, Any], expected: str, tmp_path: Path
) -> None:
    _, frontend, model = await shell_turn(args, tmp_path)
    [seen] = tool_returns(model.seen[-1])
    assert seen.outcome == "retried" and expected in str(seen.content)
    [shown] = frontend.of("tool_result")
    assert shown.status == "failed"


async def test_a_huge_timeout_is_capped_and_the_command_runs(tmp_path: Path) -> None:
    _, frontend, _ = await shell_turn({"cmd": "echo capped", "timeout": 10**30}, tmp_path)
    [shown] = frontend.of("tool_result")
    assert (shown.status, shown.content) == ("ok", "capped")
