"""Model resolution: providers, automatic choice, model strings and the fallback chain."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.models.test import TestModel

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.llm.providers import ProviderError, configured_provider, resolve_model
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import make_deps
from tests.servers.fake_openai import error, serve, text


def test_automatic_choice_is_gemini_with_a_key_else_local() -> None:
    assert configured_provider(Settings()) == "local"
    assert configured_provider(Settings(gemini_api_key="k")) == "gemini"
    assert configured_provider(Settings(llm_provider="Ollama")) == "ollama"


def test_model_string_wins_and_test_gives_testmodel() -> None:
    resolved = resolve_model(Settings(model="test", llm_provider="gemini"))
    assert isinstance(resolved.model, TestModel)
    assert resolved.provider == "model"


def test_gemini_without_a_key_says_what_to_set() -> None:
    with pytest.raises(ProviderError, match="GEMINI_API_KEY"):
        resolve_model(Settings(llm_provider="gemini"))


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ProviderError, match="gemini, ollama, openai, local"):
        resolve_model(Settings(llm_provider="skynet"))


def test_gemini_resolves_to_a_google_model_without_calling_out() -> None:
    resolved = resolve_model(Settings(llm_provider="gemini", gemini_api_key="AIza-test"))
    assert resolved.model.system == "google-gla" or "google" in resolved.model.system
    assert resolved.key_present is True


def test_ollama_uses_its_openai_compatible_v1_endpoint() -> None:
    resolved = resolve_model(Settings(llm_provider="ollama", ollama_host="http://127.0.0.1:1"))
    assert resolved.detail == "http://127.0.0.1:1"
    assert str(resolved.model.base_url).rstrip("/") == "http://127.0.0.1:1/v1"


@pytest.mark.usefixtures("allow_model_requests")
async def test_fallback_chain_moves_to_the_next_provider(tmp_path: Path) -> None:
    with serve(default=error(500, "down")) as broken, serve([text("from ollama")]) as working:
        settings = Settings(
            llm_provider="openai,ollama",
            openai_base_url=f"{broken.url}/v1",
            openai_api_key="sk-x",
            ollama_host=working.url,
            ollama_model="fake",
        )
        bundle = build_agent(settings)
        assert bundle.resolved is not None
        assert bundle.resolved.fallbacks == ["ollama:fake"]
        result = await run_turn(
            bundle.agent,
            "hi",
            deps=make_deps(tmp_path),
            history=[],
            frontend=RecordingFrontend(),
            model_settings=bundle.model_settings,
        )
    assert result.output == "from ollama"
    assert len(broken.requests) == 1 and len(working.requests) == 1
