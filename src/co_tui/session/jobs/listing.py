"""Jobs and the inbox in lines of text, as `co-tui jobs list`, `co-tui inbox`, `/jobs` and
`/inbox` show them. Everything a job or a model wrote is shown on one line with its hidden
characters as escapes."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING

from co_tui.safety.visible import visible_line

if TYPE_CHECKING:  # the store imports the schedule and signing libraries: not at startup
    from co_tui.store.jobs_store import Job, JobStore, Proposal

ARGS_SHOWN = 100
PROMPT_SHOWN = 60


def local_time(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M %Z") if moment else "never"


def job_line(store: JobStore, job: Job) -> str:
    """Id, schedule and zone, next run (or paused), the last run's state, what it does."""
    due = None if job.paused else store.next_due(job)
    state = "paused" if job.paused else f"next {local_time(due.fire if due else None)}"
    runs = store.runs(job.id)
    last = f"; last {runs[-1].state}" if runs else ""
    last += "; skips missed runs" if job.catch_up == "skip" else ""
    what = f"{job.kind} {job.prompt}".strip() if job.kind != "prompt" else job.prompt
    return (
        f"{job.id}  {visible_line(job.schedule.text)} ({job.schedule.timezone})  "
        f"{state}{last}  {visible_line(what)[:PROMPT_SHOWN]}"
    )


def proposal_lines(proposal: Proposal) -> tuple[str, str]:
    """Its id, tool and arguments; then why it asks, whose it is and when it expires."""
    args = visible_line(json.dumps(proposal.args, ensure_ascii=False))
    return (
        f"{proposal.seal.short_id}  {proposal.tool_name} {args[:ARGS_SHOWN]}",
        f"    {visible_line(proposal.reason)}; job {proposal.job_id}, "
        f"session {proposal.session_id[:8]}, expires {local_time(proposal.seal.expires)}",
    )
