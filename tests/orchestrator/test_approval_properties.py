"""Properties of the approval path: no denied call ever executes; what runs is what was shown;
no command with a shell operator is ever classified safe. (The classifier's own properties,
writing options in every spelling, are in tests/security/test_readonly_classifier.py.)"""

from __future__ import annotations

import asyncio
import shlex
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from co_tui.config.settings import DEFAULT_SAFE_COMMANDS
from co_tui.policy.approvals import is_safe_command
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps
from tests.sizes import examples

tokens = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=24,
)
decisions = st.sampled_from(list(ApprovalDecision))
batches = st.lists(
    st.lists(st.tuples(tokens, decisions), min_size=1, max_size=3), min_size=1, max_size=3
)


@pytest.mark.slow
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=batches)
def test_denied_calls_never_run_and_approved_calls_run_as_shown(batches) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        responses = []
        plan: dict[str, tuple[str, ApprovalDecision]] = {}
        for b, batch in enumerate(batches):
            calls = []
            for c, (token, decision) in enumerate(batch):
                call_id = f"c{b}_{c}"
                cmd = f"printf '%s' {shlex.quote(token)} > out-{call_id}"
                calls.append(Call("run_shell_command", {"cmd": cmd}, call_id))
                plan[call_id] = (token, decision)
            responses.append(calls)
        model = ScriptedModel(*responses, ["done"])
        frontend = RecordingFrontend(lambda req: plan[req.tool_call_id][1])
        deps = make_deps(workspace)
        bundle = make_bundle(model.model)
        result = asyncio.run(
            run_turn(bundle.agent, "go", deps=deps, history=[], frontend=frontend, request_limit=10)
        )
        assert result.error is None

        shown = {r.tool_call_id: r.args["cmd"] for r in frontend.approval_requests}
        yolo = False
        for call_id, (token, decision) in plan.items():
            out = workspace / f"out-{call_id}"
            approved = yolo or decision is not ApprovalDecision.DENY
            yolo = yolo or decision is ApprovalDecision.APPROVE_ALL
            if approved:
                assert out.read_bytes() == token.encode(), call_id
            else:
                assert not out.exists(), f"denied call {call_id} ran"
            if call_id in shown:
                assert f"> out-{call_id}" in shown[call_id]
                assert shlex.split(shown[call_id])[2] == token


SHELL_OPERATORS = (";", "&", "|", ">", "<", "`", "$(", "\n", "\r")
operators = st.sampled_from([*SHELL_OPERATORS, "&&", "||", ">>", "<<", "$(x)"])
prefixes = st.sampled_from(DEFAULT_SAFE_COMMANDS)


@settings(max_examples=examples(500), deadline=None)
@given(
    prefix=prefixes,
    before=st.text(max_size=20),
    op=operators,
    after=st.text(max_size=20),
)
def test_no_command_with_an_operator_is_ever_safe(prefix, before, op, after) -> None:
    cmd = f"{prefix} {before}{op}{after}"
    assert not is_safe_command(cmd, DEFAULT_SAFE_COMMANDS)


def listed(words: list[str]) -> bool:
    """The first word is a listed program and the entry's other words follow it (for git,
    after options before the subcommand)."""
    for entry in DEFAULT_SAFE_COMMANDS:
        program, *rest = entry.split()
        after = [w for w in words[1:] if not w.startswith("-")] if program == "git" else words[1:]
        if words[0] == program and after[: len(rest)] == rest:
            return True
    return False


@given(cmd=st.one_of(st.text(max_size=60), st.tuples(prefixes, st.text(max_size=40)).map(" ".join)))
def test_safe_implies_no_operator_and_a_listed_program(cmd) -> None:
    if is_safe_command(cmd, DEFAULT_SAFE_COMMANDS):
        assert not any(op in cmd for op in SHELL_OPERATORS)
        assert listed(shlex.split(cmd))


def test_examples() -> None:
    assert is_safe_command("ls -la", DEFAULT_SAFE_COMMANDS)
    assert is_safe_command("git status", DEFAULT_SAFE_COMMANDS)
    assert not is_safe_command("lsblk", DEFAULT_SAFE_COMMANDS)
    assert not is_safe_command("git push", DEFAULT_SAFE_COMMANDS)
    assert not is_safe_command("cat a > b", DEFAULT_SAFE_COMMANDS)
    assert not is_safe_command("echo $(id)", DEFAULT_SAFE_COMMANDS)
    assert not is_safe_command("ls\nrm -rf /", DEFAULT_SAFE_COMMANDS)
