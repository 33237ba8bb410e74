"""The embedded local model (llama.cpp server on loopback). Built in its own issue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_tui.config import Settings

if TYPE_CHECKING:
    from co_tui.llm.providers import ResolvedModel

INSTALL_HINT = 'pip install "co-tui[local]"'


def local_model(settings: Settings) -> ResolvedModel:
    from co_tui.llm.providers import ProviderError

    raise ProviderError(
        "no LLM provider is configured and the embedded local model is not available yet: "
        "set GEMINI_API_KEY, or LLM_PROVIDER=ollama, or pass --model"
    )
