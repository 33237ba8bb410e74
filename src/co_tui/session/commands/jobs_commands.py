"""`/jobs` and `/inbox`: the jobs and what their runs proposed, from inside a session.

`/inbox approve ID` shows the proposal in the approval dialog of live calls (its exact
arguments, their hidden characters as escapes, why it asks, whose it is) before anything
runs; approving there runs it once, through session/jobs/decide.py like `co-tui inbox
approve`, and denying there denies it. The dialog offers no rule to save and no network:
a proposal is decided once, for itself. A front without the dialog says where to decide.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.text import Text

from co_tui.protocol.frontend import ApprovalDecision
from co_tui.safety.visible import visible_line
from co_tui.session.commands.registry import CommandContext, SlashCommand, UsageError

if TYPE_CHECKING:
    from co_tui.protocol.frontend import ApprovalRequest
    from co_tui.store.jobs_store import JobStore, Proposal

INBOX_USAGE = "/inbox [approve|deny ID]"
# "All" of one proposal is that proposal.
APPROVING = frozenset({ApprovalDecision.APPROVE, ApprovalDecision.APPROVE_ALL})


def _say(ctx: CommandContext, *lines: str) -> None:
    """Lines a job, a model or a tool's output may have written: each on one line, its
    hidden characters (a terminal's escape sequences among them) shown as escapes."""
    ctx.show(Text("\n".join(visible_line(line) for line in lines)))


def _store() -> JobStore:
    from co_tui.store.jobs_store import JobStore

    return JobStore()


async def _jobs(ctx: CommandContext, arg: str) -> None:
    from co_tui.session.jobs.listing import job_line
    from co_tui.store.jobs_runner_lock import running_daemon

    store = _store()
    try:
        lines = [job_line(store, job) for job in store.jobs()]
        daemon = running_daemon(store.path)
    finally:
        store.close()
    if not lines:
        lines = ["No jobs. Add one with `co-tui jobs add SCHEDULE PROMPT`."]
    lines.append(
        f"The daemon (pid {daemon}) runs them."
        if daemon
        else "No daemon runs them: start `co-tui daemon`, or `co-tui daemon install`."
    )
    ctx.show(Text("\n".join(lines)))  # job_line escapes what the job holds


def approval_request(proposal: Proposal) -> ApprovalRequest:
    """The live dialog's request for a proposal: nothing to save, no network to grant."""
    from co_tui.protocol.frontend import ApprovalRequest

    return ApprovalRequest(
        session_id=proposal.session_id,
        tool_call_id=f"inbox-{proposal.seal.short_id}",
        tool_name=proposal.tool_name,
        args=proposal.args,
        reason=f"{proposal.reason}; proposed by job {proposal.job_id} ({proposal.slot}), "
        "from the inbox",
    )


async def _decide(ctx: CommandContext, verb: str, short_id: str) -> None:
    from co_tui.protocol.frontend import as_answer
    from co_tui.session.jobs.decide import Refused, approve, checked, deny
    from co_tui.store.inbox_seal import SigningKey

    store = _store()
    try:
        try:
            key = SigningKey()
            proposal = checked(store, key, short_id, datetime.now(UTC))
        except Refused as exc:
            _say(ctx, f"Refused: {exc}.")
            return
        except (OSError, ValueError) as exc:
            _say(ctx, f"The inbox key cannot be used: {exc}.")
            return
        if verb == "approve":
            answer = as_answer(await ctx.host.decide_proposal(approval_request(proposal)))
            approved = answer.decision in APPROVING
            if not approved and answer.decision is not ApprovalDecision.DENY:
                _say(ctx, "Nothing decided: it still waits in the inbox.")
                return
        else:
            approved = False
        try:
            decided = (
                await approve(store, key, short_id)
                if approved
                else await deny(store, key, short_id)
            )
        except Refused as exc:
            _say(ctx, f"Refused: {exc}.")
            return
    finally:
        store.close()
    _say(ctx, f"{short_id} {proposal.tool_name}: {decided.state} ({decided.detail})")


async def _inbox(ctx: CommandContext, arg: str) -> None:
    from co_tui.session.jobs.listing import proposal_lines

    verb, _, short_id = arg.strip().partition(" ")
    if verb:
        if verb not in ("approve", "deny") or not short_id.strip():
            raise UsageError(f"{arg!r}: say `approve ID` or `deny ID` (ids: /inbox).")
        await _decide(ctx, verb, short_id.strip())
        return
    from co_tui.session.jobs.decide import expire_waiting

    store = _store()
    try:
        expired = await expire_waiting(store)
        waiting = store.proposals()
    finally:
        store.close()
    if expired:
        _say(
            ctx, *(f"{p.seal.short_id} {p.tool_name} expired without a decision." for p in expired)
        )
    if not waiting:
        ctx.show(Text("The inbox is empty: no job proposed anything that waits."))
        return
    lines = [line for p in waiting for line in proposal_lines(p)]
    lines.append("Decide with /inbox approve ID (shows the dialog first) or /inbox deny ID.")
    ctx.show(Text("\n".join(lines)))


JOBS_COMMAND = SlashCommand("jobs", "the scheduled jobs and whether a daemon runs them", _jobs)
INBOX_COMMAND = SlashCommand(
    "inbox", "what jobs proposed, waiting for you; approve or deny one", _inbox, INBOX_USAGE
)
