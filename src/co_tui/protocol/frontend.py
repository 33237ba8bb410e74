"""FrontendProtocol: the one seam between the turn orchestrator and whatever shows it.

Two calls: `emit(event)` for every typed event of a turn (protocol/events.py; each
carries its `session_id`, so sub-agent turns interleave with the main one), and
`prompt_approval(request)` for a decision only the user can make.
Implementations: the Textual app (tui/frontend.py), HeadlessFrontend (headless/frontend.py),
RecordingFrontend (a list of events, scripted answers), NullFrontend.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from co_tui.protocol.events import ApprovalKind, ApprovalRecord, ToolStatus, TurnEvent
from co_tui.safety.visible import plain_words

__all__ = [
    "DENIED_MESSAGE",
    "ApprovalAnswer",
    "ApprovalDecision",
    "ApprovalKind",
    "ApprovalRecord",
    "ApprovalReply",
    "ApprovalRequest",
    "FrontendProtocol",
    "NetworkOffer",
    "NullFrontend",
    "ToolStatus",
    "args_hash",
    "as_answer",
    "canonical_args_json",
    "denied_message",
    "feedback_words",
]


DENIED_MESSAGE = "The user denied this action."  # what the model reads for a denied call
FEEDBACK_CHARS = 500  # of a denial's words kept


def feedback_words(feedback: str) -> str:
    """A denial's words as kept: plain (no terminal sequence reaches the model, the store or
    a terminal), one line, at most FEEDBACK_CHARS."""
    return plain_words(feedback, FEEDBACK_CHARS)


def denied_message(feedback: str = "") -> str:
    """What the model reads for a denied call: with the user's words, quoted, when they said
    what to do instead."""
    words = feedback_words(feedback)
    if not words:
        return DENIED_MESSAGE
    return f'The user denied this action and said what to do instead, in their words: "{words}"'


class ApprovalDecision(StrEnum):
    APPROVE = "approve"
    DENY = "deny"
    APPROVE_ALL = "approve_all"  # approve this and every later call in the session
    # Approve this call and save an allow rule for this project (ApprovalAnswer.rule).
    ALWAYS_ALLOW = "always_allow"
    # Approve this one command with the network on (only when ApprovalRequest.network offers it).
    APPROVE_WITH_NETWORK = "approve_network"


@dataclass(frozen=True)
class ApprovalAnswer:
    """A decision with what it carries: for ALWAYS_ALLOW, the permission rule to save (as
    the user edited it; "" saves ApprovalRequest.suggested_rule); for DENY, what the user
    said to do instead ("": nothing)."""

    decision: ApprovalDecision
    rule: str = ""
    feedback: str = ""


# What prompt_approval returns: a bare decision, or one with its rule.
ApprovalReply = ApprovalDecision | ApprovalAnswer


def as_answer(reply: ApprovalReply) -> ApprovalAnswer:
    return reply if isinstance(reply, ApprovalAnswer) else ApprovalAnswer(reply)


def canonical_args_json(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def args_hash(args: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_args_json(args).encode()).hexdigest()


@dataclass(frozen=True)
class NetworkOffer:
    """The dialog may approve this shell command with the network on, for it alone:
    `granted` says what it would reach. With network the command is an outbound call for
    the egress guard; when the guard would hold it, `egress_reason` says why and the
    request's sources and highlights are that review's."""

    granted: str
    egress_reason: str = ""


@dataclass(frozen=True, kw_only=True)
class ApprovalRequest:
    session_id: str  # the session whose call it is (a sub-agent's shows as such)
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    reason: str  # why this call needs the user's decision
    index: int = 1  # "2 of 3"
    total: int = 1
    # The egress guard held this call (`egress`): the untrusted content it may follow and
    # the private sources it carries text from (one label each, e.g. "note Projects/plan.md"),
    # what of the arguments is private text (shown highlighted, as found: decoded), and one
    # line per carried part saying from where and how it is encoded. Approve-all never
    # answers such a request.
    sources: tuple[str, ...] = ()
    highlights: tuple[str, ...] = ()
    carried: tuple[str, ...] = ()
    egress: bool = False
    # "Always allow this in this project": the permission rule for exactly this call, for the
    # user to edit and save; None when it is not offered.
    suggested_rule: str | None = None
    mcp_tool: bool = False  # the tool is an MCP server's (what `mcp:` rules match)
    # A shell command's network, one line ("" for other tools); and whether the dialog may
    # approve it with the network on (None: not offered).
    network_state: str = ""
    network: NetworkOffer | None = None

    @property
    def args_hash(self) -> str:
        return args_hash(self.args)


@runtime_checkable
class FrontendProtocol(Protocol):
    def emit(self, event: TurnEvent) -> None: ...

    async def prompt_approval(self, request: ApprovalRequest) -> ApprovalReply: ...


class NullFrontend:
    """Drops every event and denies approvals. The baseline for benchmarks."""

    def emit(self, event: TurnEvent) -> None:
        pass

    async def prompt_approval(self, request: ApprovalRequest) -> ApprovalReply:
        return ApprovalDecision.DENY  # never offers "always allow"
