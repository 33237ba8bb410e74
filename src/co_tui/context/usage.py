"""What a conversation has used: tokens, the context the next request carries, and an
estimated cost, all read from the stored responses' usage (so a resumed session counts what
it had), plus the model's context window.

Prices come from genai-prices (the maintained table pydantic-ai uses, through
`ModelResponse.cost()`); a model it does not price (the embedded model, Ollama, a test
model) has no cost. An OpenAI-compatible server other than OpenAI's (the embedded model,
Ollama, vLLM, a proxy) is priced only when genai-prices knows that server's address: a local
model named like an OpenAI one is not OpenAI's.

The context window: the `context_window` setting, else the embedded model's `local_n_ctx`,
else what the model's profile or genai-prices knows (not for Ollama, whose names are its
own), else unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelResponse

    from co_tui.config.settings import Settings

OPENAI_HOST = "api.openai.com"


@dataclass
class UsageTotals:
    """Running totals over a history that only grows: `count` reads only what is new."""

    tokens: int = 0  # input + output of every response
    context_tokens: int = 0  # the last response's input + output: the next request's size
    cost: Decimal | None = None  # None while no response was priced
    counted: int = 0  # messages of the history already counted

    def count(self, history: Sequence[ModelMessage]) -> None:
        from pydantic_ai.messages import ModelResponse

        if len(history) < self.counted:  # a different history: count it afresh
            self.reset()
        for message in history[self.counted :]:
            if not isinstance(message, ModelResponse):
                continue
            usage = message.usage
            size = usage.input_tokens + usage.output_tokens
            self.tokens += size
            if size:
                self.context_tokens = size
            price = response_cost(message)
            if price is not None:
                self.cost = (self.cost or Decimal(0)) + price
        self.counted = len(history)

    def compacted(self, saved: int, at_least: int) -> None:
        """A compaction made the next request about `saved` tokens smaller, and it still
        holds `at_least` (the summary): the context meter and /compact's report show this
        estimate until the next response reports the real size."""
        self.context_tokens = max(at_least, self.context_tokens - saved)

    def reset(self) -> None:
        self.tokens = self.context_tokens = self.counted = 0
        self.cost = None


def response_cost(response: ModelResponse) -> Decimal | None:
    """The response's price in USD, or None when genai-prices does not know its model."""
    if not response.model_name:
        return None
    url = response.provider_url
    try:
        if response.provider_name == "openai" and urlsplit(url or "").hostname != OPENAI_HOST:
            from genai_prices import calc_price

            # Another server speaking OpenAI's protocol: its own prices, if known, only.
            return calc_price(response.usage, response.model_name, provider_api_url=url).total_price
        return response.cost().total_price
    except (LookupError, ValueError):  # unknown model or provider; usage it cannot price
        return None


def context_window(settings: Settings, provider: str | None, model: object) -> int | None:
    """The model's context window in tokens, or None when unknown. `model`: the agent's."""
    from pydantic_ai.models import Model

    if settings.context_window:
        return settings.context_window
    if provider == "local":
        return settings.local_n_ctx
    if provider == "ollama" or not isinstance(model, Model):
        return None
    try:
        return model.context_window
    except Exception:  # a model without a profile to read: unknown, never a failure
        return None


def format_window(tokens: int) -> str:
    """128000 -> "128k", 32768 -> "32k", 1048576 -> "1M" (windows are round in base 10 or 2)."""
    for unit, decimal, binary in (("M", 1_000_000, 1_048_576), ("k", 1000, 1024)):
        if tokens >= decimal:
            if tokens % decimal == 0:
                return f"{tokens // decimal}{unit}"
            if tokens % binary == 0:
                return f"{tokens // binary}{unit}"
            return f"{tokens / decimal:.3g}{unit}"
    return str(tokens)


def format_cost(cost: Decimal | None) -> str:
    """ "$0.0123"; "" when unknown (nothing is shown)."""
    if cost is None:
        return ""
    if cost >= 1:
        return f"${cost:.2f}"
    return f"${cost:.4f}"
