"""Conversation memory: history processors and the summariser they share with /compact.

Two processors run before every model request (registered on the agent as
`ProcessHistory` capabilities; their output replaces the stored history):

- `TrimOldToolOutput`: tool returns older than the current turn are cut to
  `tool_output_trim_chars`, keeping the tool name and call id.
- `SlidingWindow`: over `max_history_messages`, keep the first exchange and the last half;
  the middle becomes one summary written by a tool-less agent (or a static marker when
  summarising fails). A tool call and its return are never separated.

`CoDeps.compact_next_request` asks `SlidingWindow` to compact the next request whatever its
length: run_turn sets it after the provider said the context window was exceeded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model

SUMMARY_PREFIX = "[Summary of the earlier conversation]\n"
MARKER_TEXT = (
    "[Earlier conversation trimmed: {count} message(s) were removed to fit the context "
    "window and could not be summarised.]"
)
COMPACT_ACK = "Understood. I have the summary of our conversation so far."
TRIM_NOTE = "\n[… {cut} more characters trimmed]"
MIN_TAIL = 4
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


def trim_old_tool_output(messages: list[ModelMessage], limit: int) -> list[ModelMessage]:
    """Cut tool returns before the current turn to `limit` characters."""
    end = current_turn_start(messages)
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


@dataclass
class TrimOldToolOutput:
    limit: int

    def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        return trim_old_tool_output(messages, self.limit)


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


async def summary_or_marker(messages: Sequence[ModelMessage], model: Model | str) -> ModelRequest:
    try:
        return summary_request(await summarize_messages(messages, model))
    except Exception:  # any failure of the summariser: keep going without it
        return ModelRequest(parts=[UserPromptPart(content=MARKER_TEXT.format(count=len(messages)))])


# -- the sliding window ------------------------------------------------------------------


def head_end(messages: Sequence[ModelMessage], limit: int) -> int:
    """End of the first exchange: after the first answer with text and no pending call."""
    for i, message in enumerate(messages[:limit]):
        if isinstance(message, ModelResponse):
            if any(isinstance(p, ToolCallPart) for p in message.parts):
                continue
            if any(isinstance(p, TextPart) for p in message.parts):
                return i + 1
    return 1


def tail_start(messages: Sequence[ModelMessage], head: int, keep: int) -> int | None:
    """Where the kept tail starts: about `keep` from the end, never on an orphaned return."""
    nominal = max(head + 1, len(messages) - keep)
    for i in range(nominal, head, -1):  # prefer keeping a little more
        if is_safe_start(messages[i]):
            return i
    for i in range(nominal + 1, len(messages)):
        if is_safe_start(messages[i]):
            return i
    return None


def window_split(messages: Sequence[ModelMessage], max_messages: int) -> tuple[int, int] | None:
    """(head end, tail start) for a history over the limit, or None to leave it alone."""
    if len(messages) <= max_messages:
        return None
    keep = max(MIN_TAIL, max_messages // 2)
    head = head_end(messages, max(1, max_messages // 4))
    tail = tail_start(messages, head, keep)
    if tail is None or tail <= head:
        return None
    return head, tail


async def compact_for_overflow(
    messages: list[ModelMessage], model: Model | str, trim_chars: int
) -> list[ModelMessage]:
    """Everything before the current turn becomes one summary; the turn's outputs are trimmed."""
    start = current_turn_start(messages)
    current = [
        replace(m, parts=[trim_tool_return(p, trim_chars) if isinstance(p, ToolReturnPart)
                          else p for p in m.parts]) if isinstance(m, ModelRequest) else m
        for m in messages[start:]
    ]  # fmt: skip
    if start == 0:
        return current
    return [await summary_or_marker(messages[:start], model), *current]


@dataclass
class SlidingWindow:
    max_messages: int
    summarizer: Model | str
    trim_chars: int = 2000

    async def __call__(
        self, ctx: RunContext[Any], messages: list[ModelMessage]
    ) -> list[ModelMessage]:
        deps = ctx.deps
        if getattr(deps, "compact_next_request", False):
            deps.compact_next_request = False
            return await compact_for_overflow(messages, self.summarizer, self.trim_chars)
        split = window_split(messages, self.max_messages)
        if split is None:
            return messages
        head, tail = split
        middle = messages[head:tail]
        return [*messages[:head], await summary_or_marker(middle, self.summarizer),
                *messages[tail:]]  # fmt: skip


# -- /compact ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CompactResult:
    messages: list[ModelMessage]
    before_messages: int
    after_messages: int
    before_tokens: int
    after_tokens: int

    def describe(self) -> str:
        saved = self.before_tokens - self.after_tokens
        return (
            f"Compacted {self.before_messages} message(s) into {self.after_messages}: "
            f"about {self.before_tokens:,} → {self.after_tokens:,} tokens "
            f"({saved:,} saved)."
        )


async def compact_history(
    messages: Sequence[ModelMessage], model: Model | str, focus: str = ""
) -> CompactResult:
    """The whole history as a summary request and an acknowledgement. Raises on failure."""
    summary = await summarize_messages(messages, model, focus=focus)
    new: list[ModelMessage] = [
        summary_request(summary),
        ModelResponse(parts=[TextPart(content=COMPACT_ACK)]),
    ]
    return CompactResult(new, len(messages), len(new), approx_tokens(messages), approx_tokens(new))


def history_processors(
    max_messages: int, trim_chars: int, summarizer: Model | str
) -> tuple[TrimOldToolOutput, SlidingWindow]:
    return TrimOldToolOutput(trim_chars), SlidingWindow(max_messages, summarizer, trim_chars)
