"""The frontend a job's turn runs with. Nobody watches a job, so nothing it asks to do runs:
every call that needs approval is filed as a proposal for the user (`co-tui inbox`) and
answered to the model as not done. Calls the rules allow without asking (read-only commands:
sandboxed, offline, time-limited) run as in any session."""

from __future__ import annotations

from datetime import UTC, datetime

from co_tui.protocol.events import TurnEvent
from co_tui.protocol.frontend import (
    ApprovalAnswer,
    ApprovalDecision,
    ApprovalReply,
    ApprovalRequest,
)
from co_tui.store.inbox_seal import Sealed, SigningKey
from co_tui.store.jobs_store import Job, JobStore, Proposal

# What the model reads for a held call (inside the denial message: "in their words").
HELD = (
    "Held for my approval in my inbox, not done. Do not try it again in this run; "
    "say in your answer what you proposed."
)


class JobFrontend:
    def __init__(self, store: JobStore, key: SigningKey, job: Job, slot: str) -> None:
        self._store = store
        self._key = key
        self._job = job
        self._slot = slot
        self._position = 0
        self.held = 0  # calls filed in this run

    def emit(self, event: TurnEvent) -> None:
        """The session's store keeps the transcript; a job shows nothing."""

    async def prompt_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self._position += 1
        now = datetime.now(UTC)
        what = Sealed(
            self._job.id,
            self._slot,
            self._position,
            str(self._job.workspace),
            request.session_id,
            request.tool_call_id,
            request.tool_name,
            request.args_hash,
        )
        proposal = Proposal(what, request.args, request.reason, now, self._key.seal(what, now))
        if self._store.propose(proposal):
            self.held += 1
        return ApprovalAnswer(ApprovalDecision.DENY, feedback=HELD)
