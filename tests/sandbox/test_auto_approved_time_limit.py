"""A command that runs without asking (the read-only classifier accepted it) is killed after
AUTO_APPROVED_TIMEOUT_S (30 s) whatever timeout the model asked for; a command the user
approved keeps the timeout asked for, up to sandbox_max_timeout."""

from __future__ import annotations

from pathlib import Path

import pytest

from co_tui.config.settings import DEFAULT_SAFE_COMMANDS, Settings
from co_tui.context.deps import create_deps
from co_tui.protocol.recording import RecordingFrontend
from co_tui.sandbox import SandboxChoice
from co_tui.tools.shell import AUTO_APPROVED_TIMEOUT_S, command_timeout
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, tool_returns
from tests.sandbox.conftest import make_sandbox


@pytest.mark.parametrize(
    ("requested", "max_timeout", "auto_approved", "allowed"),
    [
        (120, 600, True, 30),
        (600, 600, True, 30),
        (10, 600, True, 10),
        (120, 20, True, 20),  # a lower sandbox_max_timeout still applies
        (0, 600, True, 1),
        (120, 600, False, 120),  # approved by the user: as asked
        (900, 600, False, 600),
    ],
)
def test_only_auto_approved_commands_are_held_to_the_limit(
    requested: int, max_timeout: int, auto_approved: bool, allowed: int
) -> None:
    assert AUTO_APPROVED_TIMEOUT_S == 30
    assert command_timeout(requested, max_timeout, auto_approved=auto_approved) == allowed


@pytest.mark.bwrap
async def test_an_auto_approved_command_is_killed_at_the_limit(
    workspace: Path, request: pytest.FixtureRequest
) -> None:
    """`sleep` listed as read-only, run without asking with a 120 s timeout: killed at 30 s
    (sleep 40 would otherwise end by itself, with no output)."""
    sandbox = make_sandbox("bwrap", workspace, request)
    settings = Settings(shell_safe_commands=[*DEFAULT_SAFE_COMMANDS, "sleep"])
    deps = create_deps(settings, workspace, sandbox_choice=SandboxChoice(sandbox, "test"))
    call = Call("run_shell_command", {"cmd": "sleep 40", "timeout": 120}, "call-1")
    model = ScriptedModel([call], ["done"])
    frontend = RecordingFrontend([])
    result = await run_turn(
        make_bundle(model.model).agent, "wait", deps=deps, history=[], frontend=frontend
    )
    assert result.ok, result.error
    assert frontend.approval_requests == []  # it ran without asking
    (returned,) = tool_returns(result.messages)
    assert str(returned.content) == (
        "[timed out after 30s; the command and its children were killed]"
    )
