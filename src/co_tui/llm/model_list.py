"""/model: the models the configured providers serve.

Ollama lists its pulled models at `GET /api/tags`; an OpenAI-compatible server at
`GET {base}/models`; Gemini at its `models` endpoint when a key is set. The embedded local
model is the one file it was started with. `catalogue` asks them all at once for the model
picker, each failure kept as one line for that provider.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from co_tui.config.settings import Settings

TIMEOUT_S = 5.0
GEMINI_MODELS_URL = "https://generativelanguage.googleapis.com/v1beta/models"
# The setting that names each provider's model: what a switch to that provider changes.
MODEL_SETTINGS = {
    "gemini": "gemini_model",
    "ollama": "ollama_model",
    "openai": "openai_model",
    "local": "",
}


def switched_settings(settings: Settings, choice: str) -> Settings | None:
    """The settings that use `choice`, "provider:model" (the embedded model: "local" or
    "local:<its name>"); None when `choice` names no provider."""
    provider, _, name = choice.partition(":")
    if provider not in MODEL_SETTINGS or not (name or provider == "local"):
        return None
    update: dict[str, object] = {"llm_provider": provider, "model": ""}
    if MODEL_SETTINGS[provider]:
        update[MODEL_SETTINGS[provider]] = name
    return settings.model_copy(update=update)


class ModelListUnavailable(Exception):
    """The provider's models cannot be listed; the message says why, in one line."""


async def _get_json(url: str, headers: dict[str, str]) -> object:
    import httpx

    try:
        async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
            response = await client.get(url, headers=headers)
            response.raise_for_status()
            return response.json()
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        refused = status in (401, 403)
        why = "the server refused the key" if refused else "the models cannot be listed"
        raise ModelListUnavailable(f"{url} answered {status}: {why}") from None
    except httpx.ConnectError:
        host = httpx.URL(url).netloc.decode()
        raise ModelListUnavailable(
            f"cannot list the models at {url}: could not connect to {host}"
        ) from None
    except httpx.TimeoutException:
        raise ModelListUnavailable(
            f"cannot list the models at {url}: no answer within {TIMEOUT_S:g} s"
        ) from None
    except (httpx.HTTPError, ValueError) as exc:
        raise ModelListUnavailable(f"cannot list the models at {url}: {exc}") from None


def _names(data: object, key: str, field: str) -> list[str]:
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ModelListUnavailable(f"the provider's model list has no {key!r}")
    names = (item.get(field) for item in items if isinstance(item, dict))
    return sorted({name for name in names if isinstance(name, str) and name})


async def list_models(settings: Settings, provider: str) -> list[str]:
    """The model names `provider` serves. Raises ModelListUnavailable."""
    if provider == "ollama":
        host = settings.ollama_host.rstrip("/").removesuffix("/v1")
        return _names(await _get_json(f"{host}/api/tags", {}), "models", "name")
    if provider == "openai":
        base = (settings.openai_base_url or "https://api.openai.com/v1").rstrip("/")
        key = settings.openai_api_key
        headers = {"Authorization": f"Bearer {key.get_secret_value()}"} if key else {}
        return _names(await _get_json(f"{base}/models", headers), "data", "id")
    if provider == "gemini":
        if not settings.gemini_api_key:
            raise ModelListUnavailable("no Gemini key is set (GEMINI_API_KEY)")
        headers = {"x-goog-api-key": settings.gemini_api_key.get_secret_value()}
        names = _names(await _get_json(GEMINI_MODELS_URL, headers), "models", "name")
        return [name.removeprefix("models/") for name in names]
    if provider == "local":
        raise ModelListUnavailable(
            "The embedded local model serves the one file it was started with; choose "
            "another in /setup (it downloads it and switches), or with the local_model "
            "setting (`co-tui model pull NAME` first) or local_model_path, and restart."
        )
    raise ModelListUnavailable(
        f"The {provider or 'configured'} provider's models are not listed here; change the "
        "model in the settings and restart."
    )


@dataclass(frozen=True)
class ProviderModels:
    """One provider's models for the picker, or why they could not be listed."""

    provider: str
    names: tuple[str, ...] = ()
    error: str = ""


def _local_models(settings: Settings) -> ProviderModels:
    from co_tui.llm.local.provider import local_spec
    from co_tui.llm.resolved import ProviderError

    try:
        spec = local_spec(settings)
    except ProviderError as exc:
        return ProviderModels("local", error=str(exc).splitlines()[0])
    return ProviderModels("local", (spec.alias,))


def catalogue_providers(settings: Settings) -> list[str]:
    """The providers the picker asks: those configured, Ollama (it runs locally, without a
    key) and the embedded model."""
    providers = []
    if settings.openai_base_url or settings.openai_api_key:
        providers.append("openai")
    providers.append("ollama")
    if settings.gemini_api_key:
        providers.append("gemini")
    return providers


async def catalogue(settings: Settings) -> list[ProviderModels]:
    """Every provider's models, asked concurrently; the embedded model last."""

    async def one(provider: str) -> ProviderModels:
        try:
            return ProviderModels(provider, tuple(await list_models(settings, provider)))
        except ModelListUnavailable as exc:
            return ProviderModels(provider, error=str(exc))

    listed = await asyncio.gather(*(one(p) for p in catalogue_providers(settings)))
    return [*listed, _local_models(settings)]


def models_table(provider: str, names: list[str], current: str) -> Table:
    table = Table(
        title=f"Models served by {provider} (switch with /model <name>)",
        title_justify="left",
        show_header=False,
        box=None,
    )
    table.add_column(no_wrap=True)
    table.add_column()
    for name in names:
        if name == current:
            table.add_row(Text("●", style="green"), Text(f"{name}  (in use)", style="bold"))
        else:
            table.add_row("", Text(name))
    if not names:
        table.add_row("", Text("none: the provider serves no model"))
    return table
