"""TurnRunner (and run_turn, its one-call form): one user turn, from prompt to final answer.

Streams the agent's events to the frontend, loops over approval pauses (a resumed run may
ask again), retries provider errors per policy with one shared UsageLimits, and turns a
cancellation at any point into `interrupted=True` with a history the next turn can use.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic_ai import (
    Agent,
    AgentRunResult,
    AgentRunResultEvent,
    DeferredToolRequests,
    DeferredToolResults,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartStartEvent,
    RunCancelled,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UsageLimits,
)
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage

from co_tui.context.attachments import typed_prompt
from co_tui.context.dangling import patch_dangling_tool_calls
from co_tui.context.deps import CoDeps, TurnScope
from co_tui.llm.provider_errors import ProviderErrorAction, classify_provider_error
from co_tui.protocol import events as ev
from co_tui.protocol.frontend import ApprovalRecord, FrontendProtocol
from co_tui.telemetry.tracing import turn_span
from co_tui.turn.approval_batch import ApprovalBatch
from co_tui.turn.approval_flow import ApprovalFlow
from co_tui.turn.silence import ProviderSilence
from co_tui.turn.stream import EventStream

Sleep = Callable[[float], Awaitable[None]]
# Persistence hook: the history so far and, at an approval pause, the pending requests.
Checkpoint = Callable[[list[ModelMessage], DeferredToolRequests | None], Awaitable[None]]


class ToolJournal(Protocol):
    """Where decided calls are written ahead of their run (store.recorder.SessionRecorder).
    A call is named by `response_at`, the position in the turn's messages of the response
    that made it, and its id: a provider may reuse ids (`call_0` in every turn)."""

    async def calls_decided(self, response_at: int, records: Sequence[ApprovalRecord]) -> None:
        """Before any of them runs: approved calls as running, denied ones as denied."""

    async def call_finished(self, response_at: int, tool_call_id: str, result: str) -> None:
        """A decided call returned `result` (what the model is told)."""

    async def call_interrupted(self, response_at: int, tool_call_id: str) -> None:
        """A decided call was running when the turn ended without its return (cancelled,
        or co-tui stopping on a signal)."""


@dataclass
class TurnResult:
    messages: list[ModelMessage]
    output: str | None
    usage: RunUsage
    interrupted: bool = False
    streamed_text: str = ""
    error: str | None = None
    approvals: list[ApprovalRecord] = field(default_factory=list)
    save_error: str | None = None  # the turn could not be stored: why (first failure)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.interrupted


class _Aborted(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Hop:
    """One call of agent.run_stream_events; keeps its handle so a failure can be resumed."""

    def __init__(self) -> None:
        self.handle: Any = None

    def messages(self, fallback: list[ModelMessage]) -> list[ModelMessage]:
        if self.handle is None:
            return fallback
        try:
            return list(self.handle.all_messages())
        except Exception:
            return fallback


async def _stream_hop(
    hop: _Hop,
    agent: Agent[CoDeps, Any],
    stream: EventStream,
    *,
    prompt: str | Sequence[UserContent] | None,
    history: list[ModelMessage],
    deferred: DeferredToolResults | None,
    deps: CoDeps,
    usage: RunUsage,
    limits: UsageLimits,
    model_settings: ModelSettings | None,
    checkpoint: Callable[[list[ModelMessage]], Awaitable[None]] | None = None,
    finished: Callable[[str, str], Awaitable[None]] | None = None,
) -> AgentRunResult[Any]:
    """`finished(tool_call_id, result)`: awaited as each tool call returns."""
    result: AgentRunResult[Any] | None = None
    saved = len(history)
    silence = ProviderSilence(stream.frontend, stream.session_id)
    async with (
        silence.watching(),
        agent.run_stream_events(
            prompt,
            message_history=history,
            deferred_tool_results=deferred,
            deps=deps,
            usage=usage,
            usage_limits=limits,
            model_settings=model_settings,
        ) as events,
    ):
        hop.handle = events
        async for event in events:
            silence.seen(event)
            stream.handle(event)
            # A new part or a tool call means the previous response (or the prompt, or the
            # tool returns) is complete: save it before streaming on.
            if checkpoint is not None and isinstance(event, PartStartEvent | FunctionToolCallEvent):
                current = events.all_messages()
                if len(current) > saved:
                    saved = len(current)
                    await checkpoint(list(current))
            if finished is not None and isinstance(event, FunctionToolResultEvent):
                part = event.part
                text = (
                    part.model_response()
                    if isinstance(part, RetryPromptPart)
                    else part.model_response_str()
                )
                await finished(part.tool_call_id, text)
            if isinstance(event, AgentRunResultEvent):
                result = event.result
    if result is None:
        raise UnexpectedModelBehavior("the run ended without a result")
    return result


def _last_response_at(messages: Sequence[ModelMessage]) -> int:
    return max(i for i, m in enumerate(messages) if isinstance(m, ModelResponse))


def _drop_interrupted_tail(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Before retrying a failed request: forget a response the failure cut short."""
    last = messages[-1] if messages else None
    if isinstance(last, ModelResponse) and last.state == "interrupted":
        return messages[:-1]
    return messages


class TurnRunner:
    """One user turn, from prompt to `TurnResult`: streams the agent's events to the
    frontend, asks about deferred calls (and writes the decisions ahead of the run they
    start), retries provider errors per policy with one shared UsageLimits, and turns a
    cancellation at any point into `interrupted=True` with a history the next turn can use.

    A runner runs one turn. While it runs, `deps.turn` is this turn's `TurnScope` (what the
    tools and the send window read of the turn); it is a fresh, empty one afterwards.
    """

    def __init__(
        self,
        agent: Agent[CoDeps, Any],
        *,
        deps: CoDeps,
        frontend: FrontendProtocol,
        model_settings: ModelSettings | None = None,
        request_limit: int = 25,
        http_retries: int = 2,
        sleep: Sleep = asyncio.sleep,
        on_checkpoint: Checkpoint | None = None,
        journal: ToolJournal | None = None,
    ) -> None:
        self.agent = agent
        self.deps = deps
        self.frontend = frontend
        self.model_settings = model_settings
        self.request_limit = request_limit
        self.http_retries = http_retries
        self.sleep = sleep
        self.on_checkpoint = on_checkpoint
        self.journal = journal
        self.sid = deps.session_id
        self.usage = RunUsage()
        self.limits = UsageLimits(request_limit=request_limit)  # one budget for every hop
        self.stream = EventStream(frontend, self.sid)
        self.records: list[ApprovalRecord] = []
        self.approvals = ApprovalFlow(deps, frontend, self.records)  # asks and records each call
        self.messages: list[ModelMessage] = []
        self.next_prompt: str | Sequence[UserContent] | None = None
        self.deferred: DeferredToolResults | None = None
        self.retries_used = 0
        self.compacted = False
        self.awaiting_approval = False
        self.hop = _Hop()
        self.save_error: str | None = None
        # Journaled calls that have not returned yet: id -> their response's position.
        self.journaled: dict[str, int] = {}

    async def run(
        self,
        prompt: str | Sequence[UserContent],
        *,
        history: Sequence[ModelMessage],
        resume_deferred: DeferredToolRequests | None = None,
    ) -> TurnResult:
        """`resume_deferred`: the approvals a stored session was waiting for; asked first,
        then the run continues from `history` (which ends with their calls) and `prompt` is
        unused."""
        self.deps.turn = TurnScope(frontend=self.frontend)  # sub-agents report here
        try:
            with turn_span(self.sid, prompt) as span:
                result = await self._run(prompt, history, resume_deferred)
                span.finished(
                    input_tokens=result.usage.input_tokens or 0,
                    output_tokens=result.usage.output_tokens or 0,
                    requests=result.usage.requests or 0,
                    interrupted=result.interrupted,
                    error=result.error,
                )
                return result
        finally:
            self.deps.turn = TurnScope()

    # -- reporting and saving --
    def _report_usage(self) -> None:
        self.stream.usage(self.usage.input_tokens, self.usage.output_tokens, self.usage.requests)

    def _status(self, message: str, retry_in_s: float | None = None) -> None:
        self.frontend.emit(
            ev.Status(session_id=self.sid, message=message, level="warning", retry_in_s=retry_in_s)
        )

    def _finish(self, result: TurnResult) -> TurnResult:
        self.stream.close_open()
        self._report_usage()
        self.stream.end(output=result.output, interrupted=result.interrupted)
        result.streamed_text = self.stream.streamed_text
        result.approvals = self.records
        result.save_error = self.save_error
        return result

    async def _checkpoint(
        self, msgs: list[ModelMessage], pending: DeferredToolRequests | None
    ) -> None:
        if self.on_checkpoint is not None:
            await self._saving(self.on_checkpoint(msgs, pending))

    async def _saving(self, write: Awaitable[None]) -> None:
        try:
            await write
        except Exception as exc:  # saving must never break the turn
            if self.save_error is None:
                self.save_error = f"could not save the session: {exc}"
                self._status(self.save_error)

    async def _decide(self, requests: DeferredToolRequests) -> DeferredToolResults:
        """Ask, then write the decisions ahead of the run they start."""
        self.awaiting_approval = True
        batch = len(self.records)
        results = await ApprovalBatch(self.approvals, self.messages).decide(requests)
        self.awaiting_approval = False
        if self.journal is not None:
            decided = self.records[batch:]
            # The calls are the last response's; the history is the session's whole list.
            response_at = _last_response_at(self.messages)
            self.journaled = {r.tool_call_id: response_at for r in decided}
            await self._saving(self.journal.calls_decided(response_at, decided))
        return results

    async def _call_finished(self, tool_call_id: str, result: str) -> None:
        response_at = self.journaled.pop(tool_call_id, None)
        if self.journal is not None and response_at is not None:
            await self._saving(self.journal.call_finished(response_at, tool_call_id, result))

    async def _done(self, result: TurnResult) -> TurnResult:
        if self.journal is not None:  # what never returned is closed, not left running
            for tool_call_id, response_at in self.journaled.items():
                await self._saving(self.journal.call_interrupted(response_at, tool_call_id))
            self.journaled = {}
        if not (result.interrupted and self.awaiting_approval):  # else the pause stays stored
            await self._checkpoint(result.messages, None)
        return self._finish(result)

    def _current_messages(self) -> list[ModelMessage]:
        msgs = self.hop.messages(self.messages)
        if self.next_prompt is not None and len(msgs) == len(self.messages):
            # The prompt never reached the history (failed before the run started).
            msgs = [*msgs, ModelRequest(parts=[UserPromptPart(content=self.next_prompt)])]
        return msgs

    # -- the turn --
    async def _run(
        self,
        prompt: str | Sequence[UserContent],
        history: Sequence[ModelMessage],
        resume_deferred: DeferredToolRequests | None,
    ) -> TurnResult:
        self.messages = list(history)
        self.next_prompt = prompt
        self.frontend.emit(ev.TurnStart(session_id=self.sid, prompt=typed_prompt(prompt)))
        try:
            if resume_deferred is not None:
                self.next_prompt = None
                self.deferred = await self._decide(resume_deferred)
            while True:
                result = await self._hop()
                if result is None:
                    continue
                self.messages = list(result.all_messages())
                self.next_prompt = None
                self.deps.turn.compact_next_request = False
                if isinstance(result.output, DeferredToolRequests):
                    self._report_usage()
                    await self._checkpoint(self.messages, result.output)
                    self.deferred = await self._decide(result.output)
                    continue
                output = result.output if isinstance(result.output, str) else str(result.output)
                return await self._done(TurnResult(self.messages, output, self.usage))
        except (asyncio.CancelledError, RunCancelled, KeyboardInterrupt):
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            patched = patch_dangling_tool_calls(self._current_messages())
            return await self._done(TurnResult(patched, None, self.usage, interrupted=True))
        except _Aborted as exc:
            return await self._failed(exc.message, patch_dangling_tool_calls(self.messages))
        except UsageLimitExceeded as exc:
            message = (
                f"stopped: this turn reached its limit of {self.request_limit} model requests "
                f"({exc})"
            )
            return await self._failed(message, patch_dangling_tool_calls(self._current_messages()))
        except Exception as exc:  # a failing tool or model must not take the app down
            message = f"the turn failed: {type(exc).__name__}: {exc}"
            with contextlib.suppress(Exception):
                self.messages = _drop_interrupted_tail(self._current_messages())  # a cut answer
            return await self._failed(message, patch_dangling_tool_calls(self.messages))

    async def _failed(self, message: str, messages: list[ModelMessage]) -> TurnResult:
        self.frontend.emit(ev.Error(session_id=self.sid, message=message))
        return await self._done(TurnResult(messages, None, self.usage, error=message))

    async def _hop(self) -> AgentRunResult[Any] | None:
        """One run of the agent to its end or its next approval pause; None when a provider
        error is being retried (the loop goes round again)."""
        self.hop = _Hop()
        mark = self.stream.attempt_mark()
        try:
            return await _stream_hop(
                self.hop,
                self.agent,
                self.stream,
                prompt=self.next_prompt,
                history=self.messages,
                deferred=self.deferred,
                deps=self.deps,
                usage=self.usage,
                limits=self.limits,
                model_settings=self.model_settings,
                checkpoint=(lambda msgs: self._checkpoint(msgs, None))
                if self.on_checkpoint
                else None,
                finished=self._call_finished if self.journal is not None else None,
            )
        except ModelAPIError as exc:
            await self._after_provider_error(exc, mark)
            return None

    async def _after_provider_error(self, exc: ModelAPIError, mark: Any) -> None:
        """Compact once, reflect, or back off and retry, per the provider error's verdict;
        raises _Aborted when the turn cannot go on."""
        self.stream.close_open()
        verdict = classify_provider_error(exc, self.retries_used)
        self.messages = _drop_interrupted_tail(self._current_messages())
        if verdict.action is ProviderErrorAction.CONTEXT_OVERFLOW and not self.compacted:
            # Once a turn: the context window (SendWindow) summarises before the retry.
            self.compacted = True
            self.stream.discard_attempt(mark, verdict.message)
            self.deps.turn.compact_next_request = True
            self.next_prompt, self.deferred = None, None
            self._status(f"{verdict.message}; compacting the history")
            return
        retryable = verdict.action in (
            ProviderErrorAction.REFLECT,
            ProviderErrorAction.BACKOFF_RETRY,
        )
        if not retryable or self.retries_used >= self.http_retries:
            if retryable:
                message = f"{verdict.message} (gave up after {self.retries_used} retries)"
            else:
                message = verdict.message
            raise _Aborted(message) from exc
        self.retries_used += 1
        self.deferred = None
        self.stream.discard_attempt(mark, verdict.message)
        if verdict.action is ProviderErrorAction.REFLECT:
            self.next_prompt = (
                f"The provider rejected the previous request: {verdict.message}. "
                "Correct the request and continue."
            )
            self._status(f"{verdict.message}; asking the model to correct it")
        else:
            self.next_prompt = None
            self._status(
                f"{verdict.message}; retry {self.retries_used} of {self.http_retries} "
                f"in {verdict.delay_s:g}s",
                retry_in_s=verdict.delay_s,
            )
            await self.sleep(verdict.delay_s)


async def run_turn(
    agent: Agent[CoDeps, Any],
    prompt: str | Sequence[UserContent],
    *,
    deps: CoDeps,
    history: Sequence[ModelMessage],
    frontend: FrontendProtocol,
    model_settings: ModelSettings | None = None,
    request_limit: int = 25,
    http_retries: int = 2,
    sleep: Sleep = asyncio.sleep,
    on_checkpoint: Checkpoint | None = None,
    journal: ToolJournal | None = None,
    resume_deferred: DeferredToolRequests | None = None,
) -> TurnResult:
    """One turn with a fresh `TurnRunner`. `journal`: decided calls are written there before
    they run, and again as they return."""
    runner = TurnRunner(
        agent,
        deps=deps,
        frontend=frontend,
        model_settings=model_settings,
        request_limit=request_limit,
        http_retries=http_retries,
        sleep=sleep,
        on_checkpoint=on_checkpoint,
        journal=journal,
    )
    return await runner.run(prompt, history=history, resume_deferred=resume_deferred)
