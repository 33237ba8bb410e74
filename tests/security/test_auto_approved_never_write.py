"""The property behind auto-approval, run for real: whatever command a model sends, if it
runs without asking, the workspace is byte-identical afterwards.

Commands are generated from the default read-only programs mixed with options known to
write or execute (and ordinary ones); each goes through run_turn with the real bubblewrap
sandbox, so both layers are exercised together: the classifier, and the read-only view.
"""

from __future__ import annotations

import asyncio
import shlex
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from co_tui.config.settings import DEFAULT_SAFE_COMMANDS, Settings
from co_tui.context.deps import create_deps
from co_tui.protocol.recording import RecordingFrontend
from co_tui.sandbox import SandboxError, select_sandbox
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, engine_unavailable, make_bundle
from tests.security.hostile import hostile_workspace, tree_digest
from tests.sizes import examples

pytestmark = pytest.mark.bwrap

WRITING = [
    "--output=victim.txt",
    "--output victim.txt",
    "--outp=victim.txt",
    "-o README.md",
    "-oREADME.md",
    "--pre rm",
    "--pre=sh",
    "--pre-glob '*'",
    "-D feature",
    "-d feature",
    "-m feature renamed",
    "-f feature HEAD",
    "newbranch",
    "--set=2020-01-01",
    "-s 2020-01-01",
    "-C",
    "-R -H .",
    "--ext-diff",
    "--textconv",
    "-c core.fsmonitor='touch PWNED'",
    "--format='#!/bin/sh%ntouch X%n' --output=s.sh",
    "--hostname-bin=./s.sh",
    "-z",
]
ORDINARY = [".", "-la", "README.md", "victim.txt", "HEAD", "--oneline", "-n 1", "foo", "-1", "--"]


@pytest.fixture(scope="module")
def repo() -> Iterator[Path]:
    with hostile_workspace() as path:
        try:
            select_sandbox("bwrap", path, session_id="probe")
        except SandboxError as exc:
            engine_unavailable(f"bwrap cannot run here: {exc}")
        yield path


def run_one(repo: Path, cmd: str) -> RecordingFrontend:
    settings_ = Settings()
    session_id = str(uuid.uuid4())
    choice = select_sandbox("bwrap", repo, session_id=session_id)
    deps = create_deps(settings_, repo, session_id=session_id, sandbox_choice=choice)
    model = ScriptedModel([Call("run_shell_command", {"cmd": cmd}, "c1")], ["ok"])
    frontend = RecordingFrontend()  # every question is answered "deny"
    bundle = make_bundle(model.model)
    asyncio.run(run_turn(bundle.agent, "go", deps=deps, history=[], frontend=frontend))
    return frontend


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    program=st.sampled_from(DEFAULT_SAFE_COMMANDS),
    args=st.lists(st.sampled_from(WRITING + ORDINARY), min_size=1, max_size=4),
)
def test_auto_approved_commands_never_change_the_workspace(
    repo: Path, program: str, args: list[str]
) -> None:
    cmd = " ".join([program, *args])
    shlex.split(cmd)  # every generated command is well-formed shell
    before = tree_digest(repo)
    frontend = run_one(repo, cmd)
    (record,) = frontend.of("approval")
    if record.decision == "auto":
        assert record.read_only
    assert tree_digest(repo) == before, f"{cmd!r} ({record.decision}) changed the workspace"
