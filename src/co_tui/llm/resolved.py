"""What model resolution produces and how it fails: shared by providers.py and local.py.

A module of its own so that the embedded local model (local.py) and the provider table
(providers.py, which loads local.py only when the local provider is chosen) do not import
each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic_ai.models import Model
from pydantic_ai.profiles.openai import OpenAIModelProfile
from pydantic_ai.settings import ModelSettings


class ProviderError(Exception):
    """The configured provider cannot be used; the message says what to do."""


@dataclass
class ResolvedModel:
    model: Model
    provider: str  # gemini | ollama | openai | local | model (a pydantic-ai model string)
    model_name: str
    model_settings: ModelSettings | None = None
    key_present: bool | None = None  # None when the provider needs no key
    fallbacks: list[str] = field(default_factory=list)
    detail: str = ""  # e.g. the local model file

    @property
    def label(self) -> str:
        chain = " → ".join([f"{self.provider}:{self.model_name}", *self.fallbacks])
        return chain


# The app does its own backoff (llm/provider_errors.py): SDK retries off.
NO_SDK_RETRIES: ModelSettings = {"max_retries": 0}

# A streamed answer that ends without a finish reason was cut short (the connection closed a
# close-delimited or chunked body early): the OpenAI-compatible models then raise ModelAPIError,
# a network error the turn retries (llm/provider_errors.py), instead of keeping the
# partial text as the answer.
STREAMS_MUST_FINISH = OpenAIModelProfile(openai_chat_streaming_requires_finish_reason=True)
