"""Model resolution: settings -> a pydantic-ai model (or a fallback chain of them).

Providers: `gemini` (pydantic-ai's google: models), `ollama` (its OpenAI-compatible /v1),
`openai` (any OpenAI-compatible server), `local` (the embedded llama.cpp server), or any
pydantic-ai model string through the `model` setting (`test` gives TestModel).
`LLM_PROVIDER=gemini,ollama` chains providers: the next is tried when one fails.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from co_tui.config.settings import Settings
from co_tui.llm.resolved import (
    NO_SDK_RETRIES,
    STREAMS_MUST_FINISH,
    ProviderError,
    ResolvedModel,
)

PROVIDERS = ("gemini", "ollama", "openai", "local")

__all__ = [
    "NO_SDK_RETRIES",
    "PROVIDERS",
    "ProviderError",
    "ResolvedModel",
    "configured_provider",
    "resolve_model",
]


def configured_provider(settings: Settings) -> str:
    """The provider in force: explicit, else gemini when a key is set, else the local model."""
    if settings.llm_provider.strip():
        return settings.llm_provider.strip().lower()
    return "gemini" if settings.gemini_api_key else "local"


def _model_settings(settings: Settings, timeout: Any = None) -> ModelSettings:
    ms: ModelSettings = dict(NO_SDK_RETRIES)  # type: ignore[assignment]
    if settings.temperature is not None:
        ms["temperature"] = settings.temperature
    if timeout is not None:
        ms["timeout"] = timeout
    return ms


def provider_timeout(settings: Settings) -> Any:
    """An httpx.Timeout: connect within provider_connect_timeout; each read (the wait for the
    next bytes of a streamed answer) within provider_idle_timeout. pydantic-ai's default
    waits 600 s per attempt with nothing on screen."""
    import httpx

    connect, idle = settings.provider_connect_timeout, settings.provider_idle_timeout
    return httpx.Timeout(connect=connect, read=idle, write=idle, pool=connect)


def _openai_compatible(name: str, base_url: str, api_key: str, settings: Settings) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel

    from co_tui.shims.openai_chunks import ValidatingOpenAIProvider

    provider = ValidatingOpenAIProvider(base_url=base_url, api_key=api_key)
    model_settings = _model_settings(settings, provider_timeout(settings))
    return OpenAIChatModel(
        name, provider=provider, profile=STREAMS_MUST_FINISH, settings=model_settings
    )


def _resolve_one(provider: str, settings: Settings) -> ResolvedModel:
    if provider == "gemini":
        if not settings.gemini_api_key:
            raise ProviderError(
                "provider gemini needs GEMINI_API_KEY (environment or settings.json "
                "'gemini_api_key'); unset LLM_PROVIDER to use the embedded local model"
            )
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        model: Model = GoogleModel(
            settings.gemini_model,
            provider=GoogleProvider(api_key=settings.gemini_api_key.get_secret_value()),
            # Google takes seconds only: the idle timeout (its client connects within 5 s).
            settings=_model_settings(settings, settings.provider_idle_timeout),
        )
        return ResolvedModel(model, "gemini", settings.gemini_model, key_present=True)
    if provider == "ollama":
        host = settings.ollama_host.rstrip("/")
        base = host if host.endswith("/v1") else f"{host}/v1"
        model = _openai_compatible(settings.ollama_model, base, "ollama", settings)
        return ResolvedModel(model, "ollama", settings.ollama_model, detail=host)
    if provider == "openai":
        if not settings.openai_base_url and not settings.openai_api_key:
            raise ProviderError(
                "provider openai needs OPENAI_BASE_URL (an OpenAI-compatible server) "
                "or OPENAI_API_KEY"
            )
        base = settings.openai_base_url or "https://api.openai.com/v1"
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "none"
        model = _openai_compatible(settings.openai_model, base, key, settings)
        return ResolvedModel(
            model,
            "openai",
            settings.openai_model,
            key_present=bool(settings.openai_api_key),
            detail=base,
        )
    if provider == "local":
        from co_tui.llm.local.provider import local_model

        return local_model(settings)
    raise ProviderError(
        f"unknown LLM provider {provider!r}: use one of {', '.join(PROVIDERS)}, "
        "or set a pydantic-ai model string with --model / CO_TUI_MODEL"
    )


def _from_model_string(name: str, settings: Settings) -> ResolvedModel:
    from pydantic_ai.models import infer_model

    if name == "test":
        from pydantic_ai.models.test import TestModel

        # TestModel calls every tool with made-up arguments and retries the ones that ask for
        # a retry until the turn fails; calling only the shell shows the approval path.
        model: Model = TestModel(call_tools=["run_shell_command"])
        return ResolvedModel(model, "model", name, model_settings=_model_settings(settings))
    try:
        model = infer_model(name)
    except Exception as exc:  # pydantic-ai raises UserError or ImportError for bad names
        raise ProviderError(f"model {name!r} cannot be used: {exc}") from None
    # A model string can name any SDK: seconds are the timeout they all take.
    model_settings = _model_settings(settings, settings.provider_idle_timeout)
    return ResolvedModel(model, "model", name, model_settings=model_settings)


def resolve_model(settings: Settings) -> ResolvedModel:
    if settings.model.strip():
        return _from_model_string(settings.model.strip(), settings)
    chain = [p.strip().lower() for p in configured_provider(settings).split(",") if p.strip()]
    resolved = [_resolve_one(p, settings) for p in chain]
    primary = resolved[0]
    if len(resolved) == 1:
        return primary
    from pydantic_ai.models.fallback import FallbackModel

    primary_model: Any = primary.model
    chained = FallbackModel(primary_model, *[r.model for r in resolved[1:]])
    return ResolvedModel(
        chained,
        primary.provider,
        primary.model_name,
        key_present=primary.key_present,
        fallbacks=[f"{r.provider}:{r.model_name}" for r in resolved[1:]],
        detail=primary.detail,
    )
