"""EventStream: pydantic-ai's stream events of one session's run, as typed events with
explicit boundaries. One class serves main turns and sub-agents alike."""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic_ai import (
    AgentRunResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
)
from pydantic_ai.messages import (
    RetryPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolReturnPart,
)

from co_tui.context.tool_calls import tool_args
from co_tui.policy.approvals import key_argument
from co_tui.protocol import events as ev
from co_tui.protocol.frontend import FrontendProtocol
from co_tui.protocol.tool_display import ToolDisplay

# A ToolReturnPart's outcome, as the status a frontend shows.
OUTCOME_STATUS: dict[str, ev.ToolStatus] = {
    "success": "ok",
    "failed": "failed",
    "denied": "denied",
    "interrupted": "interrupted",
    "retried": "failed",
}


def result_text(content: Any) -> str:
    """A tool's result as text for the transcript."""
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return str(content)


def shown_result(part: ToolReturnPart) -> tuple[ev.ToolStatus, str, str | None]:
    """(status, text, display) of a tool's return: the `ToolDisplay` the tool attached, when
    it did (an error one shows the call as failed), else the result itself."""
    status = OUTCOME_STATUS.get(part.outcome, "ok")
    display = part.metadata
    if not isinstance(display, ToolDisplay):
        return status, result_text(part.content), None
    if display.error and status == "ok":
        status = "failed"
    return status, display.text, display.text


class EventStream:
    """Per run of one session: which boundaries are open, which calls were shown, the text.
    `emit` sends one event to the frontend (with this stream's session id filled in)."""

    def __init__(self, frontend: FrontendProtocol, session_id: str) -> None:
        self.frontend = frontend
        self.session_id = session_id
        self.text_open = False
        self.thinking_open = False
        self._text_parts: list[str] = []
        self._thinking_parts: list[str] = []
        self._current_text: list[str] = []
        self._current_thinking: list[str] = []
        self._shown_calls: set[str] = set()
        self._call_started: dict[str, float] = {}
        self._thinking_started = 0.0
        self.tool_call_count = 0

    @property
    def streamed_text(self) -> str:
        return "".join(self._text_parts + self._current_text)

    @property
    def thinking_text(self) -> str | None:
        return "".join(self._thinking_parts) or None

    def attempt_mark(self) -> int:
        """Where the current request's text starts (see discard_attempt)."""
        return len(self._text_parts)

    def discard_attempt(self, mark: int, reason: str) -> None:
        """A failed request will be retried: what it streamed since `mark` is not part of
        the answer. Fronts that showed it are told (AttemptDiscarded)."""
        self.close_open()
        text = "".join(self._text_parts[mark:])
        del self._text_parts[mark:]
        if text:
            self.frontend.emit(
                ev.AttemptDiscarded(session_id=self.session_id, reason=reason, text=text)
            )

    def close_open(self) -> None:
        """End whatever is streaming (before tool events, on errors, on interrupt)."""
        sid = self.session_id
        if self.thinking_open:
            self.thinking_open = False
            text = "".join(self._current_thinking)
            self._thinking_parts.append(text)
            self._current_thinking.clear()
            took = time.monotonic() - self._thinking_started
            self.frontend.emit(ev.ThinkingEnd(session_id=sid, content=text, duration_s=took))
        if self.text_open:
            self.text_open = False
            text = "".join(self._current_text)
            self._text_parts.append(text)
            self._current_text.clear()
            self.frontend.emit(ev.TextEnd(session_id=sid, content=text))

    def _text_delta(self, delta: str) -> None:
        if not delta:
            return
        if not self.text_open:
            self.close_open()
            self.text_open = True
            self.frontend.emit(ev.TextStart(session_id=self.session_id))
        self._current_text.append(delta)
        self.frontend.emit(ev.TextDelta(session_id=self.session_id, content=delta))

    def _thinking_delta(self, delta: str) -> None:
        if not delta:
            return
        if not self.thinking_open:
            self.close_open()
            self.thinking_open = True
            self._thinking_started = time.monotonic()
            self.frontend.emit(ev.ThinkingStart(session_id=self.session_id))
        self._current_thinking.append(delta)
        self.frontend.emit(ev.ThinkingDelta(session_id=self.session_id, content=delta))

    def handle(self, event: object) -> None:
        if isinstance(event, PartStartEvent):
            if isinstance(event.part, TextPart):
                self._text_delta(event.part.content)
            elif isinstance(event.part, ThinkingPart):
                self._thinking_delta(event.part.content)
            else:
                self.close_open()
        elif isinstance(event, PartDeltaEvent):
            if isinstance(event.delta, TextPartDelta):
                self._text_delta(event.delta.content_delta)
            elif isinstance(event.delta, ThinkingPartDelta):
                self._thinking_delta(event.delta.content_delta or "")
        elif isinstance(event, PartEndEvent):
            if isinstance(event.part, TextPart | ThinkingPart):
                self.close_open()
        elif isinstance(event, FunctionToolCallEvent):
            self.close_open()
            part = event.part
            self._call_started[part.tool_call_id] = time.monotonic()
            if part.tool_call_id in self._shown_calls:
                return  # repeated when a run resumes after approval
            self._shown_calls.add(part.tool_call_id)
            self.tool_call_count += 1
            args = tool_args(part)
            self.frontend.emit(
                ev.ToolCall(
                    session_id=self.session_id,
                    tool_call_id=part.tool_call_id,
                    tool_name=part.tool_name,
                    args=args,
                    key_arg=key_argument(part.tool_name, args),
                )
            )
        elif isinstance(event, FunctionToolResultEvent):
            self.close_open()
            self._tool_result(event)
        elif isinstance(event, AgentRunResultEvent):
            self.close_open()

    def _tool_result(self, event: FunctionToolResultEvent) -> None:
        part = event.part
        started = self._call_started.pop(part.tool_call_id, None)
        duration = time.monotonic() - started if started is not None else None
        if isinstance(part, RetryPromptPart):
            status: ev.ToolStatus = "failed"
            text, display = part.model_response(), None
        else:
            assert isinstance(part, ToolReturnPart)
            status, text, display = shown_result(part)
        self.frontend.emit(
            ev.ToolResult(
                session_id=self.session_id,
                tool_call_id=part.tool_call_id,
                tool_name=part.tool_name or "",
                status=status,
                content=text,
                display=display,
                duration_s=duration,
            )
        )

    # -- the end of a run --
    def usage(self, input_tokens: int, output_tokens: int, requests: int) -> None:
        self.frontend.emit(
            ev.Usage(
                session_id=self.session_id,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                requests=requests,
                tool_calls=self.tool_call_count,
            )
        )

    def end(self, *, output: str | None, interrupted: bool) -> None:
        """Close the run: `ResponseComplete` for a final answer, `Interrupted` when the user
        stopped it, then `TurnEnd`."""
        self.close_open()
        sid = self.session_id
        if interrupted:
            self.frontend.emit(ev.Interrupted(session_id=sid))
        elif output is not None:
            thinking = self.thinking_text
            self.frontend.emit(
                ev.ResponseComplete(session_id=sid, content=output, thinking_text=thinking)
            )
        self.frontend.emit(ev.TurnEnd(session_id=sid, interrupted=interrupted))
