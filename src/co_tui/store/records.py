"""What the session store holds and hands out: a session's info, its tool runs and notes,
a loaded session, and messages encoded as rows.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
)

from co_tui.context.compaction import Compaction
from co_tui.context.dangling import CallAnswer, patch_dangling_tool_calls
from co_tui.store import schema
from co_tui.store.schema import MIGRATIONS
from co_tui.store.tool_displays import restore_displays

TITLE_CHARS = 80


ABANDONED_APPROVAL = "Not run: the approval was never given (the session was reopened)."


UNFINISHED_CALL = (
    "Interrupted: this call was approved and started, but its result was never recorded "
    "(co-tui stopped while it ran, or another co-tui is still running it). It may have run, "
    "in part or in full. It was not run again; check its effects before repeating it."
)


DENIED_BEFORE = "Not run: the user denied this call."


NO_RECORD = "Interrupted: co-tui stopped before this call's result was recorded."


def new_session_id() -> str:
    return str(uuid.uuid4())


def title_from_prompt(prompt: str) -> str:
    line = next((ln.strip() for ln in prompt.splitlines() if ln.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def encode_message(message: ModelMessage) -> bytes:
    return ModelMessagesTypeAdapter.dump_json([message])[1:-1]  # the one element of the list


def decode_messages(rows: Sequence[bytes]) -> list[ModelMessage]:
    messages = ModelMessagesTypeAdapter.validate_json(b"[" + b",".join(rows) + b"]")
    restore_displays(messages)
    return messages


def visible_args(args: dict[str, Any], limit: int = 200) -> str:
    """The arguments as one line, hidden characters made visible (they reach a terminal)."""
    from co_tui.safety.visible import visible

    text = visible(json.dumps(args, ensure_ascii=False), keep="")
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class SessionInfo:
    id: str
    title: str
    model: str
    cwd: str
    created: float
    updated: float
    format_version: int
    turns: int
    message_count: int
    has_pending: bool
    interrupted: bool
    forked_from: str | None = None
    headless: bool = False  # written by `co-tui -p` (kept out of the lists by default)

    @property
    def readable(self) -> bool:
        return self.format_version == schema.FORMAT_VERSION or self.format_version in MIGRATIONS

    def age(self, now: float | None = None) -> str:
        return human_age((now or time.time()) - self.updated)


def human_age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"


# "interrupted": it started, and the turn was cancelled (or co-tui stopped on a signal)
# before it returned.
ToolRunState = Literal["running", "done", "denied", "interrupted"]


@dataclass(frozen=True)
class ToolRun:
    """One decided tool call, as written ahead of its run. `response_at`: the position, in
    the session's messages, of the response that made the call; with the call's id it names
    the call (a provider may give every turn's call the same id)."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    decision: str  # the ApprovalRecord's decision: approve, auto, approve_all, always, deny
    state: ToolRunState
    result: str | None = None  # what it returned, once done
    response_at: int = field(kw_only=True)  # schema.UNKNOWN_POSITION: a row from before 4

    def answer(self) -> CallAnswer:
        """What the model is told about this call when its return was never stored."""
        if self.state == "denied":
            return CallAnswer(DENIED_BEFORE, "denied")
        if self.state == "done" and self.result is not None:
            return CallAnswer(self.result, "success")
        return CallAnswer(UNFINISHED_CALL)


@dataclass(frozen=True)
class Note:
    """An error shown in the transcript, after the first `position` stored messages."""

    position: int
    message: str
    level: Literal["error"] = "error"


@dataclass
class LoadedSession:
    info: SessionInfo
    messages: list[ModelMessage]
    pending: DeferredToolRequests | None = None
    compactions: list[Compaction] = field(default_factory=list)
    # Calls that were approved and started but whose return was never stored: their answer
    # (ToolRun.answer) is already in `messages`; fronts tell the user about them.
    unfinished: list[ToolRun] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)

    def unfinished_notice(self) -> str | None:
        """One line for the user about calls that started but never returned, or None."""
        if not self.unfinished:
            return None
        calls = "; ".join(
            f"{run.tool_name}({visible_args(run.args)})"
            + (" finished; its result was recovered" if run.state == "done" else "")
            for run in self.unfinished
        )
        return (
            f"{len(self.unfinished)} approved call(s) had started when this session was last "
            f"open and never reported back: {calls}. They may have run; none was run again."
        )

    @property
    def compaction(self) -> Compaction | None:
        """The one in force: later compactions summarise the earlier ones."""
        return self.compactions[-1] if self.compactions else None

    def history_without_pending(self) -> list[ModelMessage]:
        """For a frontend that will not ask: the pending calls answered as not run."""
        if self.pending is None:
            return self.messages
        return patch_dangling_tool_calls(self.messages, ABANDONED_APPROVAL)
