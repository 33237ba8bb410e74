"""Translate pydantic-ai stream events into FrontendProtocol calls with explicit boundaries."""

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

from co_tui.orchestrator.approvals import key_argument, tool_args
from co_tui.orchestrator.frontend import (
    FrontendProtocol,
    ToolCallInfo,
    ToolResultInfo,
    ToolStatus,
)

_OUTCOME_STATUS: dict[str, ToolStatus] = {
    "success": "ok",
    "failed": "failed",
    "denied": "denied",
    "interrupted": "interrupted",
    "retried": "failed",
}


def result_text(content: Any) -> tuple[str, str | None]:
    """(text for the transcript, the `display` field when the tool returned one)."""
    if isinstance(content, dict) and isinstance(content.get("display"), str):
        return content["display"], content["display"]
    if isinstance(content, str):
        return content, None
    try:
        return json.dumps(content, ensure_ascii=False, indent=2, default=str), None
    except (TypeError, ValueError):
        return str(content), None


class EventTranslator:
    """Per turn: keeps which boundaries are open, which tool calls were shown, and the text."""

    def __init__(self, frontend: FrontendProtocol, session_id: str) -> None:
        self.frontend = frontend
        self.session_id = session_id
        self.text_open = False
        self.thinking_open = False
        self._text_parts: list[str] = []
        self._current_text: list[str] = []
        self._current_thinking: list[str] = []
        self._shown_calls: set[str] = set()
        self._call_started: dict[str, float] = {}
        self.tool_call_count = 0

    @property
    def streamed_text(self) -> str:
        return "".join(self._text_parts + self._current_text)

    def close_open(self) -> None:
        """End whatever is streaming (before tool events, on errors, on interrupt)."""
        if self.thinking_open:
            self.thinking_open = False
            self.frontend.on_thinking_end(self.session_id, "".join(self._current_thinking))
            self._current_thinking.clear()
        if self.text_open:
            self.text_open = False
            text = "".join(self._current_text)
            self._text_parts.append(text)
            self._current_text.clear()
            self.frontend.on_text_end(self.session_id, text)

    def _text_delta(self, delta: str) -> None:
        if not delta:
            return
        if not self.text_open:
            self.close_open()
            self.text_open = True
            self.frontend.on_text_start(self.session_id)
        self._current_text.append(delta)
        self.frontend.on_text_delta(self.session_id, delta)

    def _thinking_delta(self, delta: str) -> None:
        if not delta:
            return
        if not self.thinking_open:
            self.close_open()
            self.thinking_open = True
            self.frontend.on_thinking_start(self.session_id)
        self._current_thinking.append(delta)
        self.frontend.on_thinking_delta(self.session_id, delta)

    def handle(self, event: object) -> None:
        sid = self.session_id
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
            info = ToolCallInfo(
                part.tool_call_id, part.tool_name, args, key_argument(part.tool_name, args)
            )
            self.frontend.on_tool_call(sid, info)
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
            status: ToolStatus = "failed"
            text, display = part.model_response(), None
        else:
            assert isinstance(part, ToolReturnPart)
            status = _OUTCOME_STATUS.get(getattr(part, "outcome", "success"), "ok")
            text, display = result_text(part.content)
        info = ToolResultInfo(
            part.tool_call_id, part.tool_name or "", status, text, display, duration
        )
        self.frontend.on_tool_result(self.session_id, info)
