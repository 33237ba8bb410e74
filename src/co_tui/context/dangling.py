"""Make an interrupted history valid for the next turn.

Every tool call the model made must be answered before the next request. Calls that were
cut off while streaming (their response is marked interrupted) never ran and may hold
half-written arguments: they are dropped. Complete calls without a return get one saying
the user interrupted them, with the outcome `interrupted` (drawn as such, never as a success).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)

INTERRUPTED_MESSAGE = "Interrupted by user."


@dataclass(frozen=True)
class CallAnswer:
    """The return a call without one gets: what the model is told, and the outcome stored
    (and drawn) with it."""

    content: str
    outcome: Literal["success", "denied", "interrupted"] = "interrupted"


def _answered_ids(messages: list[ModelMessage]) -> set[str]:
    ids: set[str] = set()
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_call_id:
                    ids.add(part.tool_call_id)
    return ids


def patch_dangling_tool_calls(
    messages: list[ModelMessage],
    error_message: str | Callable[[ToolCallPart], CallAnswer] = INTERRUPTED_MESSAGE,
) -> list[ModelMessage]:
    """`error_message`: the answer for every unanswered call (its outcome `interrupted`), or
    a function of the call."""
    if not messages:
        return messages
    messages = list(messages)
    last_response_at = max(
        (i for i, m in enumerate(messages) if isinstance(m, ModelResponse)), default=None
    )
    if last_response_at is None:
        return messages
    response = messages[last_response_at]
    assert isinstance(response, ModelResponse)
    if response.state == "interrupted":
        kept = [p for p in response.parts if not isinstance(p, ToolCallPart)]
        if len(kept) != len(response.parts):
            if not kept:
                del messages[last_response_at]
                return messages
            messages[last_response_at] = replace(response, parts=kept)
            return messages
    answered = _answered_ids(messages[last_response_at + 1 :])
    missing = [
        p for p in response.parts if isinstance(p, ToolCallPart) and p.tool_call_id not in answered
    ]
    if not missing:
        return messages

    def answer(call: ToolCallPart) -> CallAnswer:
        return error_message(call) if callable(error_message) else CallAnswer(error_message)

    returns = [
        ToolReturnPart(
            tool_name=p.tool_name,
            tool_call_id=p.tool_call_id,
            content=(given := answer(p)).content,
            outcome=given.outcome,
        )
        for p in missing
    ]
    tail = messages[-1]
    if isinstance(tail, ModelRequest) and last_response_at < len(messages) - 1:
        messages[-1] = replace(tail, parts=[*tail.parts, *returns])
    else:
        messages.append(ModelRequest(parts=returns))
    return messages
