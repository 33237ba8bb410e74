"""A proposal as a job's run files it, for the tests of the store and the inbox."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from co_tui.session.jobs.store import Proposal

PROPOSAL = Proposal(
    job_id="j1",
    slot="2026-11-30T09:00",
    position=1,
    session_id="s1" * 8,
    tool_call_id="call_0",
    tool_name="run_shell_command",
    args={"cmd": "touch x"},
    args_hash="h",
    reason="it writes",
    created=datetime(2026, 11, 30, 8, 0, tzinfo=UTC),
    state="waiting",
)


def a_proposal(**changes: Any) -> Proposal:
    return replace(PROPOSAL, **changes)
