"""replay(messages): a stored conversation as the events a live turn would have emitted, so
a frontend draws a restored transcript through the same path as a live one.

Each user prompt opens a turn (`TurnStart(replayed=True)`: its prompt has not been shown
yet); answers come as text start/delta/end, tool calls with their results. Thinking stays
out (it was shown live only); calls still waiting for approval are left to the resumed run,
which shows them again. Where the model started being sent a summary (a compaction), one
line says so; the messages it stands for are all shown. Errors shown live (an aborted turn's)
come back from the stored notes, at the place they were shown.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.context.attachments import typed_text
from co_tui.context.summaries import content_text, is_summary
from co_tui.context.tool_calls import tool_args
from co_tui.policy.approvals import key_argument
from co_tui.protocol import events as ev
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.turn.stream import shown_result

if TYPE_CHECKING:
    from co_tui.context.compaction import Compaction
    from co_tui.store.records import Note

SUMMARY_NOTE = "earlier conversation summarised"  # a summary stored by an older co-tui


def _prompt_text(content: Any) -> str:
    if isinstance(content, str):
        return typed_text(content)  # the files it attached are not shown again
    shown = [c for c in content if isinstance(c, str)]
    others = [
        f"[{type(c).__name__}]" for c in content if not isinstance(c, str | TextContent)
    ]  # an image, a document: named
    return " ".join([*shown, *others])


def _returns(messages: Sequence[ModelMessage]) -> dict[int, dict[str, ToolReturnPart]]:
    """By the position of each response: the returns to its calls, by id. They are in the
    requests between it and the next response; a provider may reuse ids in every turn."""
    found: dict[int, dict[str, ToolReturnPart]] = {}
    answering: dict[str, ToolReturnPart] = {}
    for index, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            answering = found.setdefault(index, {})
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                answering[part.tool_call_id] = part
    return found


def _text(sid: str, text: str) -> Iterator[ev.TurnEvent]:
    yield ev.TextStart(session_id=sid)
    yield ev.TextDelta(session_id=sid, content=text)
    yield ev.TextEnd(session_id=sid, content=text)


def _typed(ret: ToolReturnPart) -> ToolReturnPart:
    """A return stored before displays were typed (metadata) carried its display in the
    content the model read, `{"display": ..., "error": True?}`: it shows as it did live."""
    content = ret.content
    if ret.metadata is not None or not isinstance(content, dict) or ret.outcome != "success":
        return ret
    text = content.get("display")
    if not isinstance(text, str):
        return ret
    return replace(ret, metadata=ToolDisplay(text, error=content.get("error") is True))


def _tool(sid: str, call: ToolCallPart, ret: ToolReturnPart) -> Iterator[ev.TurnEvent]:
    args = tool_args(call)
    yield ev.ToolCall(
        session_id=sid,
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        args=args,
        key_arg=key_argument(call.tool_name, args),
    )
    status, text, display = shown_result(_typed(ret))
    yield ev.ToolResult(
        session_id=sid,
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        status=status,
        content=text or content_text(ret.content),
        display=display,
    )


def replay(
    messages: Sequence[ModelMessage],
    session_id: str,
    compactions: Sequence[Compaction] = (),
    notes: Sequence[Note] = (),
) -> Iterator[ev.TurnEvent]:
    returns_by_response = _returns(messages)
    notes_at: dict[int, list[Note]] = {}
    for note in notes:  # a note past the end (a shorter history) is shown at the end
        notes_at.setdefault(min(note.position, len(messages)), []).append(note)
    compacted_at: dict[int, Compaction] = {c.upto: c for c in compactions if c.replacement}
    in_turn = False
    interrupted = False

    def end_turn() -> Iterator[ev.TurnEvent]:
        if in_turn:
            if interrupted:
                yield ev.Interrupted(session_id=session_id)
            yield ev.TurnEnd(session_id=session_id, interrupted=interrupted)

    def notes_before(index: int) -> Iterator[ev.TurnEvent]:
        for note in notes_at.get(index, ()):  # inside the turn it ended: before its TurnEnd
            yield ev.Error(session_id=session_id, message=note.message)

    for index, message in enumerate(messages):
        yield from notes_before(index)
        if (compaction := compacted_at.get(index)) is not None:
            yield ev.Compacted(session_id=session_id, kind=compaction.kind, upto=compaction.upto)
        if isinstance(message, ModelRequest):
            if is_summary(message):
                yield ev.Status(session_id=session_id, message=SUMMARY_NOTE)
                continue
            for request_part in message.parts:
                if isinstance(request_part, UserPromptPart):
                    yield from end_turn()
                    in_turn, interrupted = True, False
                    prompt = _prompt_text(request_part.content)
                    yield ev.TurnStart(session_id=session_id, prompt=prompt, replayed=True)
            continue
        assert isinstance(message, ModelResponse)
        returns = returns_by_response[index]
        text: list[str] = []
        for part in message.parts:
            if isinstance(part, TextPart) and part.content.strip():
                text.append(part.content)
            elif isinstance(part, ToolCallPart) and part.tool_call_id in returns:
                if text:
                    yield from _text(session_id, "".join(text))
                    text = []
                yield from _tool(session_id, part, returns[part.tool_call_id])
        if text:
            yield from _text(session_id, "".join(text))
        interrupted = interrupted or message.state == "interrupted"
    if (compaction := compacted_at.get(len(messages))) is not None:
        yield ev.Compacted(session_id=session_id, kind=compaction.kind, upto=compaction.upto)
    yield from notes_before(len(messages))
    yield from end_turn()
