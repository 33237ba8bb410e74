"""What the jobs tests share: a proposal as a job's run files it (its seal made up: the
store does not check seals), and the environment that points a job at a fake model server."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from co_tui.session.jobs.envelope import Seal, Sealed
from co_tui.session.jobs.store import Proposal
from tests.test_headless import openai_env

PROPOSAL = Proposal(
    Sealed(
        job_id="j1",
        slot="2026-11-30T09:00",
        position=1,
        workspace="/home/someone/project",
        session_id="s1" * 8,
        tool_call_id="call_0",
        tool_name="run_shell_command",
        args_hash="h",
    ),
    args={"cmd": "touch x"},
    reason="it writes",
    created=datetime(2026, 11, 30, 8, 0, tzinfo=UTC),
    seal=Seal("0" * 32, datetime(2026, 12, 3, 8, 0, tzinfo=UTC), "k" * 16, "c2ln"),
)


def a_proposal(position: int = 1, **changes: Any) -> Proposal:
    """PROPOSAL at `position` with `changes`, and a nonce of its own (the store keeps nonces
    unique)."""
    what = replace(PROPOSAL.what, position=position)
    seal = replace(PROPOSAL.seal, nonce=f"{position:032d}")
    return replace(PROPOSAL, **{"what": what, "seal": seal, **changes})


def job_model_env(url: str) -> dict[str, str]:
    """The fake OpenAI-compatible server at `url` as the model, for jobs too (they run on
    the embedded model unless `jobs_model` says otherwise)."""
    return {**openai_env(url), "CO_TUI_JOBS_MODEL": "same"}
