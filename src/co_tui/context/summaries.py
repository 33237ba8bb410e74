"""Conversation memory: the helpers and the summariser the context window and /compact use.

What is sent of the conversation is built in context/window.py; nothing here changes the
stored history.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model

SUMMARY_PREFIX = "[Summary of the earlier conversation]\n"
COMPACT_ACK = "Understood. I have the summary of our conversation so far."
TRIM_NOTE = "\n[… {cut} more characters trimmed]"
PART_CHARS = 1_500  # per part, in what the summariser reads
TRANSCRIPT_CHARS = 120_000  # the summariser's whole input

SUMMARISER_INSTRUCTIONS = (
    "You summarise a conversation between a user and an AI assistant so that the assistant "
    "can continue it without the original messages. Keep facts, decisions, names, paths, "
    "identifiers, numbers, the user's preferences and any unfinished tasks. Mention which "
    "tools were used and what they found. Be concise: bullet points, no preamble."
)


# -- message helpers ---------------------------------------------------------------------


def is_user_turn_start(message: ModelMessage) -> bool:
    """A request the user typed (a summary counts: it stands for earlier turns)."""
    return isinstance(message, ModelRequest) and any(
        isinstance(p, UserPromptPart) for p in message.parts
    )


def is_summary(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(
        isinstance(p, UserPromptPart)
        and isinstance(p.content, str)
        and p.content.startswith(SUMMARY_PREFIX)
        for p in message.parts
    )


def current_turn_start(messages: Sequence[ModelMessage]) -> int:
    """Index of the request that opened the current turn (0 when there is none)."""
    for i in range(len(messages) - 1, -1, -1):
        if is_user_turn_start(messages[i]):
            return i
    return 0


def _answers_a_call(part: Any) -> bool:
    return isinstance(part, ToolReturnPart) or (
        isinstance(part, RetryPromptPart) and part.tool_name is not None
    )


def is_safe_start(message: ModelMessage) -> bool:
    """Can kept history start at this message without orphaning a tool return?"""
    return isinstance(message, ModelRequest) and not any(_answers_a_call(p) for p in message.parts)


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(c, str | TextContent) for c in content):
        return "\n\n".join(c if isinstance(c, str) else c.content for c in content)
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(content)


def approx_tokens(messages: Sequence[ModelMessage]) -> int:
    """About 4 characters a token, over what the model reads (text, args, results)."""
    chars = 0
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                chars += len(part.tool_name) + len(part.args_as_json_str())
            elif hasattr(part, "content"):
                chars += len(content_text(part.content))
    return (chars + 3) // 4


# -- trimming ----------------------------------------------------------------------------


def trim_tool_return(part: ToolReturnPart, limit: int) -> ToolReturnPart:
    text = content_text(part.content)
    if len(text) <= limit:
        return part
    # The note counts towards the limit, so a trimmed part is never trimmed again.
    note = TRIM_NOTE.format(cut=len(text) - limit)
    keep = max(0, limit - len(note))
    note = TRIM_NOTE.format(cut=len(text) - keep)
    return replace(part, content=text[:keep] + note)


def trim_old_tool_output(
    messages: list[ModelMessage], limit: int, through: int = 0
) -> list[ModelMessage]:
    """Cut tool returns before the current turn (or before `through`, when that is later) to
    `limit` characters. The input is not changed."""
    end = max(current_turn_start(messages), through)
    out = list(messages)
    for i in range(end):
        message = out[i]
        if not isinstance(message, ModelRequest):
            continue
        parts = [trim_tool_return(p, limit) if isinstance(p, ToolReturnPart) else p
                 for p in message.parts]  # fmt: skip
        if any(a is not b for a, b in zip(parts, message.parts, strict=True)):
            out[i] = replace(message, parts=parts)
    return out


# -- summarising -------------------------------------------------------------------------


def _clip(text: str, limit: int = PART_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f" […{len(text) - limit} more]"


def render_for_summary(messages: Sequence[ModelMessage]) -> str:
    """The messages as a plain transcript: what the summariser reads."""
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                who = "Earlier summary" if is_summary(message) else "User"
                lines.append(f"{who}: {_clip(content_text(part.content))}")
            elif isinstance(part, TextPart):
                lines.append(f"Assistant: {_clip(part.content)}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"Assistant called {part.tool_name}({_clip(part.args_as_json_str())})")
            elif isinstance(part, ToolReturnPart):
                lines.append(f"Tool {part.tool_name} returned: {_clip(content_text(part.content))}")
            elif isinstance(part, RetryPromptPart):
                lines.append(f"Retry requested: {_clip(content_text(part.content), 300)}")
            elif isinstance(part, ThinkingPart):
                continue  # private reasoning: not worth the summariser's budget
    text = "\n".join(lines)
    if len(text) > TRANSCRIPT_CHARS:  # keep the most recent part
        text = "[…earlier lines omitted]\n" + text[-TRANSCRIPT_CHARS:]
    return text


async def summarize_messages(
    messages: Sequence[ModelMessage], model: Model | str, *, focus: str = ""
) -> str:
    """A summary of `messages` by a disposable, tool-less agent. Raises when the model fails."""
    agent: Agent[None, str] = Agent(model, output_type=str, instructions=SUMMARISER_INSTRUCTIONS)
    prompt = "Summarise this conversation:\n\n" + render_for_summary(messages)
    if focus:
        prompt += f"\n\nPay particular attention to: {focus}"
    result = await agent.run(prompt)
    summary = result.output.strip()
    if not summary:
        raise ValueError("the summariser returned an empty summary")
    return summary


def summary_request(summary: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(content=SUMMARY_PREFIX + summary)])


# -- the first exchange ------------------------------------------------------------------


def head_end(messages: Sequence[ModelMessage], limit: int) -> int:
    """End of the first exchange: after the first answer with text and no pending call
    among the first `limit` messages (else just the first prompt, or nothing at 0)."""
    if limit <= 0:
        return 0
    for i, message in enumerate(messages[:limit]):
        if isinstance(message, ModelResponse):
            if any(isinstance(p, ToolCallPart) for p in message.parts):
                continue
            if any(isinstance(p, TextPart) for p in message.parts):
                return i + 1
    return 1
