"""A stored conversation as transcript items, built lazily.

`transcript_factories` returns one cheap factory per item (user turn, answer, tool call,
note) without creating any widget; the transcript mounts the visible tail and keeps the rest
archived until the user scrolls up. Thinking stays out (the sidebar shows live thinking
only); calls still waiting for approval are left to the resumed run, which shows them again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from textual.widget import Widget

from co_tui.history import SUMMARY_PREFIX, content_text, is_summary
from co_tui.orchestrator.approvals import key_argument, tool_args
from co_tui.orchestrator.events import result_text

WidgetFactory = Callable[[], Widget]

_STATUS = {"success": "ok", "failed": "failed", "denied": "denied",
           "interrupted": "interrupted", "retried": "failed"}  # fmt: skip


def _prompt_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(c if isinstance(c, str) else f"[{type(c).__name__}]" for c in content)


def _user(text: str) -> Widget:
    from co_tui.tui.widgets.transcript import UserMessage

    return UserMessage(text)


def _answer(text: str) -> Widget:
    from co_tui.tui.markdown import TranscriptMarkdown
    from co_tui.tui.widgets.transcript import RenderedItem

    return RenderedItem(TranscriptMarkdown(text), "assistant-message frozen")


def _note(text: str, level: str) -> Widget:
    from co_tui.tui.widgets.transcript import Note

    return Note(text, level)


def _tool(call: ToolCallPart, ret: ToolReturnPart) -> Widget:
    from co_tui.tui.widgets.transcript import ToolCallBlock

    status = _STATUS.get(getattr(ret, "outcome", "success"), "ok")
    text, display = result_text(ret.content)
    args = tool_args(call)
    block = ToolCallBlock(
        call.tool_call_id, call.tool_name, key_argument(call.tool_name, args), status=status,
        result=None if status == "denied" else (text or content_text(ret.content), display),
    )  # fmt: skip
    block.set_class(status != "ok", f"-{status}")
    return block


def _returns(messages: Sequence[ModelMessage]) -> dict[str, ToolReturnPart]:
    found: dict[str, ToolReturnPart] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    found[part.tool_call_id] = part
    return found


def transcript_factories(messages: Sequence[ModelMessage]) -> list[WidgetFactory]:
    returns = _returns(messages)
    items: list[WidgetFactory] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            if is_summary(message):
                items.append(partial(_note, "earlier conversation summarised", "info"))
                continue
            for part in message.parts:
                if isinstance(part, UserPromptPart) and not str(part.content).startswith(
                    SUMMARY_PREFIX
                ):
                    items.append(partial(_user, _prompt_text(part.content)))
            continue
        assert isinstance(message, ModelResponse)
        text: list[str] = []
        for part in message.parts:
            if isinstance(part, TextPart) and part.content.strip():
                text.append(part.content)
            elif isinstance(part, ToolCallPart) and part.tool_call_id in returns:
                if text:
                    items.append(partial(_answer, "".join(text)))
                    text = []
                items.append(partial(_tool, part, returns[part.tool_call_id]))
        if text:
            items.append(partial(_answer, "".join(text)))
        if message.state == "interrupted":
            items.append(partial(_note, "interrupted", "warning"))
    return items
