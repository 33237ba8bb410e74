"""What the model is sent of a conversation that is never shortened.

The transcript (`ChatSession.history`, sessions.db) only grows. Before every model request
`SendWindow` builds the request from it:

- A `Compaction` stands for the transcript's first `upto` messages: they are sent as its
  `replacement` (the first exchange and a summary, or /compact's summary and its
  acknowledgement). The latest compaction is in force; each one summarises the view the
  previous one left, so nothing is summarised twice. Compactions are stored with the session,
  as events in its transcript.
- Over `max_history_messages`, a new compaction keeps the first exchange and the newest
  messages and summarises the middle, so a request never holds more than the limit (below
  8, only the newest messages and the summary). A tool
  call and its return are never separated.
- After the provider said the context window was exceeded (`compact_next_request`),
  everything before the current turn is summarised and the turn's own tool output is trimmed.
- Tool returns older than the current turn are cut to `tool_output_trim_chars` (request only).

A summary the summariser cannot write (after the provider policy's retries) is a warning:
that request is sent with a marker in place of the middle, nothing is recorded, and the
summary is tried again on the next turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestContext

from co_tui.context.compaction import Compaction, ContextWindow
from co_tui.context.summaries import (
    COMPACT_ACK,
    approx_tokens,
    current_turn_start,
    head_end,
    is_safe_start,
    is_summary,
    summarize_messages,
    summary_request,
    trim_old_tool_output,
)
from co_tui.llm.provider_errors import ProviderErrorAction, classify_provider_error
from co_tui.protocol import events as ev

if TYPE_CHECKING:
    from co_tui.context.deps import CoDeps

Sleep = Callable[[float], Awaitable[None]]

MIN_TAIL = 2  # a call and its return
ROOMY = 8  # from this max_history_messages on, the first exchange is kept
MARKER_TEXT = (
    "[Earlier conversation left out: {count} message(s) do not fit the context window and "
    "could not be summarised this time.]"
)


def window_split(messages: Sequence[ModelMessage], max_messages: int) -> tuple[int, int] | None:
    """(head end, tail start) so that head + a summary + tail fit in `max_messages`, or None
    when the messages fit already. The tail starts at a request the user typed, a response,
    or a request without tool returns: never on a return cut from its call."""
    if len(messages) <= max_messages:
        return None
    # From 8 on, the first exchange is kept and a quarter is left free, so the next summary
    # is a few requests away; below that every message counts and the newest ones win.
    roomy = max_messages >= ROOMY
    # The head is the first exchange; an earlier summary after it is summarised again.
    first_summary = next((i for i, m in enumerate(messages) if is_summary(m)), len(messages))
    head = head_end(messages, min(max_messages // 4, first_summary)) if roomy else 0
    keep = max(MIN_TAIL, max_messages - head - 1 - (max_messages // 4 if roomy else 0))
    for start in range(max(head + 1, len(messages) - keep), len(messages)):
        if isinstance(messages[start], ModelResponse) or is_safe_start(messages[start]):
            return head, start
    return None


def marker_request(count: int) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(content=MARKER_TEXT.format(count=count))])


async def summarise_with_retries(
    messages: Sequence[ModelMessage],
    model: Model | str,
    *,
    retries: int,
    sleep: Sleep = asyncio.sleep,
    focus: str = "",
) -> str:
    """summarize_messages, retried as a model request is (provider_errors.py). Raises the
    last failure."""
    attempt = 0
    while True:
        try:
            return await summarize_messages(messages, model, focus=focus)
        except ModelAPIError as exc:
            verdict = classify_provider_error(exc, attempt)
            if verdict.action is not ProviderErrorAction.BACKOFF_RETRY or attempt >= retries:
                raise
            attempt += 1
            await sleep(verdict.delay_s)


@dataclass(frozen=True)
class CompactResult:
    compaction: Compaction
    before_messages: int
    before_tokens: int
    after_tokens: int

    @property
    def recorded(self) -> bool:
        """Only a summary smaller than what it stands for replaces it."""
        return self.after_tokens < self.before_tokens

    @property
    def saved(self) -> int:
        """About how many tokens smaller the next request is (estimated as approx_tokens)."""
        return max(0, self.before_tokens - self.after_tokens)

    def describe(self, context_before: int = 0, context_after: int = 0) -> str:
        """What /compact says. `context_before`/`context_after`: the next request's size as
        the context meter counts it (UsageTotals.context_tokens), before and after; 0 when
        no response has reported one, and then the messages' own estimate is shown. So is
        it when the meter's count is smaller than what the summary saves (a server that
        reports too little usage): the two would say the request grew."""
        if not context_before or context_after >= context_before:
            context_before, context_after = self.before_tokens, self.after_tokens
        if not self.recorded:
            return (
                f"The conversation is already short: a summary ({self.after_tokens:,} tokens) "
                f"would not make the next request (about {context_before:,} tokens) smaller; "
                "nothing was compacted."
            )
        after = len(self.compaction.replacement)
        return (
            f"Compacted {self.before_messages} message(s) into {after}: the next request "
            f"about {context_before:,} → {context_after:,} tokens ({self.saved:,} saved). "
            "The full conversation stays in the session."
        )


async def compact_conversation(
    window: ContextWindow,
    messages: Sequence[ModelMessage],
    model: Model | str,
    *,
    focus: str = "",
    retries: int = 2,
    sleep: Sleep = asyncio.sleep,
) -> CompactResult:
    """/compact: what the model is sent so far becomes a summary and an acknowledgement
    (recorded on `window`). Raises when the summariser fails after its retries."""
    view = window.view(messages)
    summary = await summarise_with_retries(view, model, retries=retries, sleep=sleep, focus=focus)
    replacement = (summary_request(summary), ModelResponse(parts=[TextPart(content=COMPACT_ACK)]))
    compaction = Compaction(len(messages), replacement, "compact")
    result = CompactResult(compaction, len(view), approx_tokens(view), approx_tokens(replacement))
    if result.recorded:
        window.compactions.append(compaction)
        window.retry_at_turn = None
    return result


@dataclass
class SendWindow(AbstractCapability["CoDeps"]):
    """Builds each request from the transcript (see the module's docstring); the run's
    history itself is left as it is."""

    max_messages: int
    summarizer: Model | str
    trim_chars: int = 2000
    retries: int = 2
    sleep: Sleep = asyncio.sleep

    async def before_model_request(
        self, ctx: RunContext[CoDeps], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        deps, window = ctx.deps, ctx.deps.context_window
        messages = list(request_context.messages)
        view: list[ModelMessage] | None = None
        if deps.turn.compact_next_request:
            deps.turn.compact_next_request = False
            view = await self._compact_for_overflow(ctx, window, messages)
        if view is None:
            view = await self._keep_within_limit(ctx, window, messages)
        through = window.view_index(window.trim_through)
        request_context.messages = trim_old_tool_output(view, self.trim_chars, through=through)
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # not spec-serialisable (holds a model)

    # -- the window --
    async def _keep_within_limit(
        self, ctx: RunContext[CoDeps], window: ContextWindow, messages: list[ModelMessage]
    ) -> list[ModelMessage]:
        view = window.view(messages)
        split = window_split(view, self.max_messages)
        if split is None:
            return view
        head, tail = split
        upto = window.transcript_index(tail)
        if upto is None:  # the tail would start inside the summary: cannot happen at >= 4
            return view
        turn = current_turn_start(messages)
        summary: ModelRequest | None = None
        if window.retry_at_turn != turn:
            summary = await self._summary(ctx, window, view[head:tail], turn)
        if summary is None:
            return [*view[:head], marker_request(tail - head), *view[tail:]]
        compaction = Compaction(upto, (*view[:head], summary), "window", window.trim_through)
        self._adopt(ctx, window, compaction)
        return window.view(messages)

    async def _compact_for_overflow(
        self, ctx: RunContext[CoDeps], window: ContextWindow, messages: list[ModelMessage]
    ) -> list[ModelMessage] | None:
        """Everything before the current turn as one summary; the turn's outputs trimmed
        too. None when there is nothing before the turn to summarise."""
        view = window.view(messages)
        start = max(current_turn_start(view), window.view_index(window.compacted_upto()))
        while start < len(view) and not (
            isinstance(view[start], ModelResponse) or is_safe_start(view[start])
        ):
            start += 1
        upto = window.transcript_index(start) if start < len(view) else None
        if not start or upto is None:  # nothing before the turn: trim the turn's outputs
            current = window.current
            replacement = current.replacement if current is not None else ()
            window.compactions.append(
                Compaction(window.compacted_upto(), replacement, "overflow", len(messages))
            )
            return None
        summary = await self._summary(ctx, window, view[:start], current_turn_start(messages))
        if summary is None:
            return [marker_request(start), *view[start:]]
        self._adopt(ctx, window, Compaction(upto, (summary,), "overflow", len(messages)))
        return window.view(messages)

    # -- summaries --
    async def _summary(
        self,
        ctx: RunContext[CoDeps],
        window: ContextWindow,
        middle: Sequence[ModelMessage],
        turn: int,
    ) -> ModelRequest | None:
        try:
            text = await summarise_with_retries(
                middle, self.summarizer, retries=self.retries, sleep=self.sleep
            )
        except Exception as exc:  # the summariser failed: this request goes without it
            window.retry_at_turn = turn
            self._warn(
                ctx,
                f"could not summarise {len(middle)} earlier message(s) ({type(exc).__name__}: "
                f"{exc}); they are left out of this request (the transcript keeps them) and "
                "the summary is tried again next turn",
            )
            return None
        window.retry_at_turn = None
        return summary_request(text)

    def _adopt(
        self, ctx: RunContext[CoDeps], window: ContextWindow, compaction: Compaction
    ) -> None:
        window.compactions.append(compaction)
        sid, kind, upto = ctx.deps.session_id, compaction.kind, compaction.upto
        self._emit(ctx, ev.Compacted(session_id=sid, kind=kind, upto=upto))

    def _warn(self, ctx: RunContext[CoDeps], message: str) -> None:
        self._emit(ctx, ev.Status(session_id=ctx.deps.session_id, message=message, level="warning"))

    @staticmethod
    def _emit(ctx: RunContext[CoDeps], event: ev.TurnEvent) -> None:
        frontend = ctx.deps.turn.frontend  # set by TurnRunner; a bare run has nobody to tell
        if frontend is not None:
            frontend.emit(event)
