"""Tokens, context size and cost counted from a history's responses; the model's window."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import RequestUsage

from co_tui.config.settings import Settings
from co_tui.context.usage import UsageTotals, context_window, format_cost, format_window


def response(model: str, url: str | None, sent: int, received: int) -> ModelResponse:
    return ModelResponse(
        parts=[TextPart("answer")],
        model_name=model,
        provider_name="openai",
        provider_url=url,
        usage=RequestUsage(input_tokens=sent, output_tokens=received),
    )


OPENAI = "https://api.openai.com/v1/"


def exchange(model: str, url: str | None, sent: int, received: int) -> list[ModelMessage]:
    return [ModelRequest.user_text_prompt("q"), response(model, url, sent, received)]


def test_totals_count_every_response_and_the_last_one_is_the_next_requests_size() -> None:
    totals = UsageTotals()
    history = exchange("gpt-4o", OPENAI, 1000, 200)
    totals.count(history)
    history += exchange("gpt-4o", OPENAI, 1300, 100)
    totals.count(history)
    assert totals.tokens == 2600
    assert totals.context_tokens == 1400
    assert totals.cost is not None and totals.cost > 0
    assert format_cost(totals.cost).startswith("$0.0")


def test_a_history_replaced_by_a_shorter_one_is_counted_afresh() -> None:
    totals = UsageTotals()
    totals.count(exchange("gpt-4o", OPENAI, 1000, 200) * 2)
    totals.count(exchange("gpt-4o", OPENAI, 10, 5))
    assert totals.tokens == 15 and totals.context_tokens == 15


@pytest.mark.parametrize(
    ("model", "url"),
    [
        ("gpt-4o", "http://127.0.0.1:41234/v1"),  # the embedded model, named like OpenAI's
        ("qwen3:4b", "http://localhost:11434/v1"),  # Ollama
        ("fn", None),  # a test model
    ],
)
def test_models_without_a_known_price_have_no_cost(model: str, url: str | None) -> None:
    totals = UsageTotals()
    totals.count(exchange(model, url, 1000, 200))
    assert totals.tokens == 1200 and totals.cost is None
    assert format_cost(totals.cost) == ""


def test_cost_is_formatted_in_dollars() -> None:
    assert format_cost(Decimal("0.01234")) == "$0.0123"
    assert format_cost(Decimal("3.456")) == "$3.46"


def test_the_context_window_comes_from_the_setting_then_the_model() -> None:
    openai = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(api_key="unused"))
    assert context_window(Settings(context_window=32768), "openai", openai) == 32768
    assert context_window(Settings(local_n_ctx=8192), "local", None) == 8192
    assert context_window(Settings(), "openai", openai) == 128000  # genai-prices knows it
    assert context_window(Settings(), "ollama", openai) is None  # Ollama's names are its own
    assert context_window(Settings(), None, FunctionModel(lambda *_: None)) is None


def test_the_context_window_setting_is_validated() -> None:
    with pytest.raises(ValueError, match="context_window"):
        Settings(context_window=10)


@pytest.mark.parametrize(
    ("tokens", "shown"),
    [(512, "512"), (4096, "4k"), (32768, "32k"), (128000, "128k"), (1_048_576, "1M")],
)
def test_windows_read_as_people_name_them(tokens: int, shown: str) -> None:
    assert format_window(tokens) == shown
