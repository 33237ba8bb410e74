"""The typed events of a turn: what the orchestrator tells a frontend, one union type.

Every event is a frozen dataclass that carries the `session_id` of the session it belongs to,
so sub-agent turns interleave with the main one and a frontend routes by session (a
sub-agent's `TurnStart` names its parent). Streaming has explicit boundaries: thinking and
text each open with a `*Start`, grow by `*Delta`s and close with an `*End` carrying the whole
part; a frontend never infers a boundary. A completed turn ends with `ResponseComplete` (the
final answer, for replay and JSON consumers) and then `TurnEnd`; an interrupted one with
`Interrupted` and `TurnEnd(interrupted=True)`.

`event_json(event)` is the stream-json line of `co-tui -p`: the event's fields and its `type`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

from co_tui.safety.visible import json_text

ToolStatus = Literal["running", "ok", "failed", "denied", "interrupted"]
# approve_network: approved with the network on, for that one command (the dialog's `w`).
ApprovalKind = Literal["approve", "approve_network", "deny", "approve_all", "always_allow", "auto"]
StatusLevel = Literal["info", "warning", "error"]


@dataclass(frozen=True, kw_only=True)
class TurnStart:
    type: ClassVar[str] = "turn_start"
    session_id: str
    prompt: str
    parent_session_id: str | None = None  # set for a sub-agent: the session that started it
    replayed: bool = False  # rebuilt from a stored session (replay): the prompt is not shown yet


@dataclass(frozen=True, kw_only=True)
class ThinkingStart:
    type: ClassVar[str] = "thinking_start"
    session_id: str


@dataclass(frozen=True, kw_only=True)
class ThinkingDelta:
    type: ClassVar[str] = "thinking_delta"
    session_id: str
    content: str


@dataclass(frozen=True, kw_only=True)
class ThinkingEnd:
    type: ClassVar[str] = "thinking_end"
    session_id: str
    content: str  # the whole thinking part
    duration_s: float | None = None  # from its first delta to its end; None when not known


@dataclass(frozen=True, kw_only=True)
class TextStart:
    type: ClassVar[str] = "text_start"
    session_id: str


@dataclass(frozen=True, kw_only=True)
class TextDelta:
    type: ClassVar[str] = "text_delta"
    session_id: str
    content: str


@dataclass(frozen=True, kw_only=True)
class TextEnd:
    type: ClassVar[str] = "text_end"
    session_id: str
    content: str  # the whole text part


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    type: ClassVar[str] = "tool_call"
    session_id: str
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    key_arg: str  # the one argument worth showing inline (a shell command, a query)


@dataclass(frozen=True, kw_only=True)
class ToolOutput:
    """What a running call printed last (a shell command's stdout and stderr as they come):
    its latest lines, the one being written included. Each replaces the one before; its
    `ToolResult` replaces them all."""

    type: ClassVar[str] = "tool_output"
    session_id: str
    tool_call_id: str
    lines: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    type: ClassVar[str] = "tool_result"
    session_id: str
    tool_call_id: str
    tool_name: str
    status: ToolStatus
    content: str  # the result as text
    display: str | None = None  # the text of the tool's `ToolDisplay`, shown verbatim
    duration_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class ApprovalRecord:
    """One decision on one deferred call: the user's, or an automatic one. Every decision is
    an event (one transcript line) and is kept in the turn's result."""

    type: ClassVar[str] = "approval"
    session_id: str
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    args_hash: str
    decision: ApprovalKind
    reason: str  # why it was decided this way: the rule that auto-approved, why it asked
    read_only: bool = False  # auto-approved to run in a read-only view of the workspace
    rule: str = ""  # the permission rule that decided it (or that the user saved)
    # the user's words with a denial, what to do instead (plain, one line): the model reads them
    feedback: str = ""


@dataclass(frozen=True, kw_only=True)
class Usage:
    type: ClassVar[str] = "usage"
    session_id: str
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int = 0


@dataclass(frozen=True, kw_only=True)
class Status:
    type: ClassVar[str] = "status"
    session_id: str
    message: str
    level: StatusLevel = "info"
    retry_in_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class ProviderWaiting:
    """The model has sent nothing for `seconds` while owed an answer; 0: it answered."""

    type: ClassVar[str] = "provider_waiting"
    session_id: str
    seconds: int


@dataclass(frozen=True, kw_only=True)
class Compacted:
    """From here on the model is sent a summary in place of the transcript's first `upto`
    messages (the transcript keeps them). kind: window | compact | overflow."""

    type: ClassVar[str] = "compacted"
    session_id: str
    kind: str
    upto: int

    def describe(self) -> str:
        what = (
            "the conversation was compacted"
            if self.kind == "compact"
            else "the earlier conversation was summarised to fit the context window"
        )
        return (
            f"{what}: the model is sent a summary of its first {self.upto} message(s) "
            "from here on (the session keeps every message)"
        )


@dataclass(frozen=True, kw_only=True)
class AttemptDiscarded:
    """A failed request's partial answer was thrown away; the request is being retried.
    `text`: what had streamed of it (already shown by a streaming front)."""

    type: ClassVar[str] = "attempt_discarded"
    session_id: str
    reason: str
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class Error:
    type: ClassVar[str] = "error"
    session_id: str
    message: str


@dataclass(frozen=True, kw_only=True)
class Interrupted:
    type: ClassVar[str] = "interrupted"
    session_id: str


@dataclass(frozen=True, kw_only=True)
class ResponseComplete:
    """The final answer of a completed turn (never sent for an interrupted or failed one)."""

    type: ClassVar[str] = "response_complete"
    session_id: str
    content: str
    thinking_text: str | None = None


@dataclass(frozen=True, kw_only=True)
class TurnEnd:
    type: ClassVar[str] = "turn_end"
    session_id: str
    interrupted: bool = False


TurnEvent = (
    TurnStart
    | ThinkingStart
    | ThinkingDelta
    | ThinkingEnd
    | TextStart
    | TextDelta
    | TextEnd
    | ToolCall
    | ToolOutput
    | ToolResult
    | ApprovalRecord
    | Usage
    | Status
    | ProviderWaiting
    | Compacted
    | AttemptDiscarded
    | Error
    | Interrupted
    | ResponseComplete
    | TurnEnd
)


def event_json(event: TurnEvent, **extra: Any) -> str:
    """One line of stream-json: {"type": ..., fields...}, hidden characters escaped."""
    record = {"type": event.type, **asdict(event), **extra}
    return json_text(record)
