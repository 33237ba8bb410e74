"""Deciding what a job proposed, from the inbox: approve or deny.

Approving checks the proposal's seal (store/inbox_seal.py: the current key's signature,
the arguments' hash, the expiry, a nonce not used before), records the nonce as used, and
then runs exactly that call, once, as a turn of the job's own session: the session is
resumed, the user's approval is its prompt, the call is replayed as the turn's one model
response (no model is asked), and it goes through the session's approval flow and tool-run
journal like any call, approved only if it is that tool with those arguments. The session
then holds the call, its result and the approval. Denying records the nonce too, so the
proposal can never be approved afterwards. A proposal nobody decided before its expiry is
marked expired (`expire_waiting`, run by the daemon and by the inbox's listing).

The job's session is told of a denial or an expiry the same way: a turn whose one call is
the proposal's, denied, so when the session is resumed the model reads that it did not run
and why. That turn runs no tool and asks no model; if the session cannot be opened, the
decision stands and its detail says so.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from co_tui.protocol import events as ev
from co_tui.protocol.frontend import ApprovalDecision, ApprovalReply, ApprovalRequest
from co_tui.store.inbox_seal import SigningKey
from co_tui.store.jobs_store import JobStore, Proposal, ProposalState

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel


_DECIDED: dict[ProposalState, str] = {
    "waiting": "it is waiting",
    "approving": "it is being approved now",
    "approved": "it was approved already",
    "failed": "it was approved already (and failed)",
    "denied": "it was denied already",
    "expired": "it expired without a decision",
}


class Refused(Exception):
    """The proposal may not be decided; the message says why."""


@dataclass(frozen=True)
class Decided:
    proposal: Proposal
    state: ProposalState
    detail: str


def checked(store: JobStore, key: SigningKey, short_id: str, now: datetime) -> Proposal:
    """The waiting proposal `short_id`, its seal verified; Refused says why not."""
    proposal = store.proposal(short_id)
    if proposal is None:
        raise Refused(f"no proposal {short_id} in the inbox (co-tui inbox lists them)")
    if proposal.state != "waiting":
        raise Refused(_DECIDED[proposal.state])
    reason = key.refusal(proposal.what, proposal.args, proposal.seal, now)
    if reason is not None:
        raise Refused(reason)
    if not proposal.workspace.is_dir():
        raise Refused(f"its workspace {proposal.workspace} is not a folder any more")
    return proposal


def _use(store: JobStore, key: SigningKey, proposal: Proposal, state: ProposalState) -> None:
    if not key.use(proposal.seal.nonce):
        raise Refused("it was decided before (its nonce is used)")
    if not store.take(proposal, state):
        raise Refused("another process decided it first")


async def deny(
    store: JobStore, key: SigningKey, short_id: str, now: datetime | None = None
) -> Decided:
    proposal = checked(store, key, short_id, now or datetime.now(UTC))
    _use(store, key, proposal, "denied")
    detail = await _told(proposal, "denied", "denied from the inbox")
    store.settle(proposal, "denied", detail)
    return Decided(proposal, "denied", detail)


async def expire_waiting(store: JobStore, now: datetime | None = None) -> list[Proposal]:
    """Mark the waiting proposals past their expiry `expired` and tell their sessions."""
    expired = []
    for proposal in store.past_expiry(now or datetime.now(UTC)):
        if not store.take(proposal, "expired"):
            continue  # decided meanwhile by another process
        detail = await _told(proposal, "expired", "expired without a decision")
        store.settle(proposal, "expired", detail)
        expired.append(proposal)
    return expired


async def approve(
    store: JobStore, key: SigningKey, short_id: str, now: datetime | None = None
) -> Decided:
    proposal = checked(store, key, short_id, now or datetime.now(UTC))
    _use(store, key, proposal, "approving")
    try:
        state, detail = await _run_once(proposal)
    except Exception as exc:  # the session or the sandbox would not start: it did not run
        state, detail = "failed", f"{type(exc).__name__}: {exc}"
    store.settle(proposal, state, detail)
    return Decided(proposal, state, detail)


async def _told(proposal: Proposal, outcome: Untold, detail: str) -> str:
    """`detail`, once the job's session holds the call as not run (best effort)."""
    try:
        await _replay_in_session(proposal, run=False, why=outcome)
    except Exception as exc:  # the decision stands; the session could not be opened
        return f"{detail}; its session was not told: {type(exc).__name__}: {exc}"
    return detail


class _ThisCallOnly:
    """The frontend of the decision's turn: approves the proposal's call (when `run`),
    nothing else."""

    def __init__(self, proposal: Proposal, call_id: str, run: bool) -> None:
        self._proposal = proposal
        self._call_id = call_id
        self._run = run
        self.result: ev.ToolResult | None = None

    def emit(self, event: ev.TurnEvent) -> None:
        if isinstance(event, ev.ToolResult) and event.tool_call_id == self._call_id:
            self.result = event

    async def prompt_approval(self, request: ApprovalRequest) -> ApprovalReply:
        same = (
            self._run
            and request.tool_call_id == self._call_id
            and request.tool_name == self._proposal.tool_name
            and request.args_hash == self._proposal.args_hash
        )
        return ApprovalDecision.APPROVE if same else ApprovalDecision.DENY


Untold = Literal["approved", "denied", "expired"]
_PROMPTS: dict[Untold, str] = {
    "approved": "From the inbox I approved {tool} with the arguments shown there.",
    "denied": "From the inbox I denied {tool}: do not run it.",
    "expired": "{tool} expired in my inbox without a decision: it did not run.",
}
_CLOSING: dict[Untold, str] = {
    "approved": "Ran {tool} as approved from the inbox.",
    "denied": "{tool} was not run: denied from the inbox.",
    "expired": "{tool} was not run: it expired in the inbox.",
}


def _replay(proposal: Proposal, call_id: str, why: Untold) -> FunctionModel:
    """A model that answers the decision's turn with the proposal's call, then one line."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    def answered(messages: list[ModelMessage]) -> bool:
        last = messages[-1]
        return isinstance(last, ModelRequest) and any(
            isinstance(p, ToolReturnPart) and p.tool_call_id == call_id for p in last.parts
        )

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if answered(messages):
            yield _CLOSING[why].format(tool=proposal.tool_name)
            return
        call = DeltaToolCall(proposal.tool_name, json.dumps(proposal.args), tool_call_id=call_id)
        yield {0: call}

    return FunctionModel(stream_function=stream, model_name="inbox-decision")


async def _replay_in_session(proposal: Proposal, run: bool, why: Untold) -> _ThisCallOnly:
    """The proposal's call as a turn of its job's session: run (approved) or denied."""
    from co_tui.config.trust import load_project_settings
    from co_tui.session.chat import ChatSession

    workspace = proposal.workspace
    loaded = load_project_settings(workspace)
    call_id = f"inbox-{proposal.seal.short_id}"
    frontend = _ThisCallOnly(proposal, call_id, run)
    session = ChatSession(
        loaded.settings, workspace=workspace, frontend=frontend, project=loaded.view
    )
    try:
        session.open_stored(resume=proposal.session_id, ask_pending=False)
        if run:  # the call may need the sandbox, an MCP server
            await session.start(None)
        else:  # nothing runs: no model to start, no server to connect
            await asyncio.to_thread(session.build)
        bundle, _ = session.built()
        with bundle.agent.override(model=_replay(proposal, call_id, why)):
            await session.run(_PROMPTS[why].format(tool=proposal.tool_name))
    finally:
        await session.aclose()
    return frontend


async def _run_once(proposal: Proposal) -> tuple[ProposalState, str]:
    result = (await _replay_in_session(proposal, run=True, why="approved")).result
    if result is None:
        return "failed", "the call did not run"
    state: ProposalState = "approved" if result.status == "ok" else "failed"
    return state, f"{result.status}: {' '.join(result.content.split())[:200]}"
