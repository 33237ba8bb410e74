"""FrontendProtocol: the one seam between the turn orchestrator and whatever shows it.

Every call carries the `session_id`, so sub-agent turns can interleave with the main one.
Streaming boundaries are explicit: a frontend never infers them from empty deltas.
Implementations: the Textual app (tui/), HeadlessFrontend (headless.py), RecordingFrontend.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

ToolStatus = Literal["running", "ok", "failed", "denied", "interrupted"]


DENIED_MESSAGE = "The user denied this action."  # what the model reads for a denied call


class ApprovalDecision(StrEnum):
    APPROVE = "approve"
    DENY = "deny"
    APPROVE_ALL = "approve_all"  # approve this and every later call in the session
    # Approve this call and save an allow rule for this project (ApprovalAnswer.rule).
    ALWAYS_ALLOW = "always_allow"


@dataclass(frozen=True)
class ApprovalAnswer:
    """A decision with what it carries: for ALWAYS_ALLOW, the permission rule to save (as
    the user edited it; "" saves ApprovalRequest.suggested_rule)."""

    decision: ApprovalDecision
    rule: str = ""


# What prompt_approval returns: a bare decision, or one with its rule.
ApprovalReply = ApprovalDecision | ApprovalAnswer


def as_answer(reply: ApprovalReply) -> ApprovalAnswer:
    return reply if isinstance(reply, ApprovalAnswer) else ApprovalAnswer(reply)


def canonical_args_json(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def args_hash(args: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_args_json(args).encode()).hexdigest()


@dataclass(frozen=True)
class ApprovalRequest:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    reason: str  # why this call needs the user's decision
    index: int = 1  # "2 of 3"
    total: int = 1
    # The egress guard: what private or untrusted content is in the conversation (one label
    # each, e.g. "note Projects/plan.md"), and which parts of the outgoing arguments appear
    # in that content (shown highlighted).
    sources: tuple[str, ...] = ()
    highlights: tuple[str, ...] = ()
    # "Always allow this in this project": the permission rule for exactly this call, for the
    # user to edit and save; None when it is not offered.
    suggested_rule: str | None = None
    mcp_tool: bool = False  # the tool is an MCP server's (what `mcp:` rules match)

    @property
    def args_hash(self) -> str:
        return args_hash(self.args)


ApprovalKind = Literal["approve", "deny", "approve_all", "always_allow", "auto"]


@dataclass(frozen=True)
class ApprovalRecord:
    """One decision on one deferred call: the user's, or an automatic one. Every decision
    is reported to the frontend (one transcript line) and kept in the turn's result."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    args_hash: str
    decision: ApprovalKind
    reason: str  # why it was decided this way: the rule that auto-approved, why it asked
    read_only: bool = False  # auto-approved to run in a read-only view of the workspace
    rule: str = ""  # the permission rule that decided it (or that the user saved)


@dataclass(frozen=True)
class ToolCallInfo:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    key_arg: str  # the one argument worth showing inline (a shell command, a query)


@dataclass(frozen=True)
class ToolResultInfo:
    tool_call_id: str
    tool_name: str
    status: ToolStatus
    content: str  # the result as text
    display: str | None = None  # a tool's `display` field, shown verbatim
    duration_s: float | None = None


@dataclass(frozen=True)
class UsageInfo:
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int = 0


@dataclass
class StatusInfo:
    message: str
    level: Literal["info", "warning", "error"] = "info"
    retry_in_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class FrontendProtocol(Protocol):
    def on_turn_start(self, session_id: str, prompt: str) -> None: ...

    def on_thinking_start(self, session_id: str) -> None: ...

    def on_thinking_delta(self, session_id: str, delta: str) -> None: ...

    def on_thinking_end(self, session_id: str, text: str) -> None: ...

    def on_text_start(self, session_id: str) -> None: ...

    def on_text_delta(self, session_id: str, delta: str) -> None: ...

    def on_text_end(self, session_id: str, text: str) -> None: ...

    def on_tool_call(self, session_id: str, call: ToolCallInfo) -> None: ...

    def on_tool_result(self, session_id: str, result: ToolResultInfo) -> None: ...

    def on_usage(self, session_id: str, usage: UsageInfo) -> None: ...

    def on_status(self, session_id: str, status: StatusInfo) -> None: ...

    def on_error(self, session_id: str, message: str) -> None: ...

    def on_turn_end(self, session_id: str, interrupted: bool) -> None: ...

    def on_approval(self, session_id: str, record: ApprovalRecord) -> None: ...

    async def prompt_approval(self, session_id: str, request: ApprovalRequest) -> ApprovalReply: ...


class NullFrontend:
    """Drops everything and denies approvals. Baseline for benchmarks; base for partial ones."""

    def on_turn_start(self, session_id: str, prompt: str) -> None:
        pass

    def on_thinking_start(self, session_id: str) -> None:
        pass

    def on_thinking_delta(self, session_id: str, delta: str) -> None:
        pass

    def on_thinking_end(self, session_id: str, text: str) -> None:
        pass

    def on_text_start(self, session_id: str) -> None:
        pass

    def on_text_delta(self, session_id: str, delta: str) -> None:
        pass

    def on_text_end(self, session_id: str, text: str) -> None:
        pass

    def on_tool_call(self, session_id: str, call: ToolCallInfo) -> None:
        pass

    def on_tool_result(self, session_id: str, result: ToolResultInfo) -> None:
        pass

    def on_usage(self, session_id: str, usage: UsageInfo) -> None:
        pass

    def on_status(self, session_id: str, status: StatusInfo) -> None:
        pass

    def on_error(self, session_id: str, message: str) -> None:
        pass

    def on_turn_end(self, session_id: str, interrupted: bool) -> None:
        pass

    def on_approval(self, session_id: str, record: ApprovalRecord) -> None:
        pass

    async def prompt_approval(self, session_id: str, request: ApprovalRequest) -> ApprovalReply:
        return ApprovalDecision.DENY  # never offers "always allow"
