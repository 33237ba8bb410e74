"""Every attack from the trust review, replayed through `co-tui -p` with the real bwrap
sandbox and an OpenAI-compatible server that scripts the hostile tool call.

Before: each command ran without asking and changed the workspace. Now: none is approved
automatically, the denial names why, and the workspace is byte-identical afterwards.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.helpers import engine_unavailable
from tests.security.hostile import ATTACKS, hostile_workspace, tree_digest
from tests.servers.fake_openai import serve, text, tool_call
from tests.test_headless import openai_env, run_cli

pytestmark = pytest.mark.bwrap


@pytest.fixture(autouse=True)
def _bwrap_installed() -> None:
    if shutil.which("bwrap") is None:
        engine_unavailable("bwrap is not installed")


@pytest.mark.e2e
@pytest.mark.parametrize("command", list(ATTACKS))
def test_attack_is_not_auto_approved_and_changes_nothing(command: str) -> None:
    with hostile_workspace() as repo:
        before = tree_digest(repo)
        script = [tool_call("run_shell_command", cmd=command), text("done")]
        with serve(script) as srv:
            proc = run_cli(
                ["-p", "look around", "--output-format", "stream-json"],
                repo,
                CO_TUI_SANDBOX_BACKEND="bwrap",
                **openai_env(srv.url),
            )
        assert proc.returncode == 0, proc.stderr
        events = [json.loads(line) for line in proc.stdout.splitlines()]
        (approval,) = [e for e in events if e["type"] == "approval"]
        assert approval["args"] == {"cmd": command}
        assert approval["decision"] == "deny", approval
        assert "not run automatically" in approval["reason"], approval["reason"]
        assert tree_digest(repo) == before, f"{ATTACKS[command]} changed"
        tool_message = srv.requests[1].body["messages"][-1]
        assert tool_message["role"] == "tool" and "denied" in tool_message["content"]


@pytest.mark.e2e
def test_a_read_only_command_still_runs_without_asking_and_says_so() -> None:
    with hostile_workspace() as repo:
        before = tree_digest(repo)
        script = [tool_call("run_shell_command", cmd="git log --oneline -1"), text("done")]
        with serve(script) as srv:
            proc = run_cli(
                ["-p", "what is the last commit?"],
                repo,
                CO_TUI_SANDBOX_BACKEND="bwrap",
                **openai_env(srv.url),
            )
        assert proc.returncode == 0, proc.stderr
        assert "auto-approved run_shell_command" in proc.stderr
        assert "read-only workspace, no network" in proc.stderr
        assert "initial" in proc.stderr  # the commit subject, from the tool's output
        tool_message = srv.requests[1].body["messages"][-1]
        assert "initial" in tool_message["content"]
        assert tree_digest(repo) == before
