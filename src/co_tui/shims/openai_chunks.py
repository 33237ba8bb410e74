"""Streamed chunks parsed by pydantic's compiled validator (an alternative path around an
upstream cost).

The openai SDK (3.54) turns each chunk of a streamed answer into a ChatCompletionChunk with
its own `construct_type`, which walks the model's fields in Python, with typing
introspection at every level: 50 µs a chunk, against 2.3 µs for the model's pydantic-core
validator on the same dict. That is a tenth of a second of CPU in a 2,000-token answer and a
second in a 20,000-token one. The SDK's strict mode would use the validator, but it raises
on any chunk that a lenient OpenAI-compatible server shapes slightly off (a missing id, an
unexpected literal), where the default mode takes it as it comes.

So the client co-tui gives pydantic-ai (`ValidatingOpenAI`) validates a response dict with
the model's own validator and, only when that fails, constructs it as the SDK always has:
the same objects for well-formed data, the SDK's leniency for the rest
(tests/shims/test_openai_chunks.py). A test there fails when the SDK stops constructing
responses in Python, to say this path can go. A subclass, not a patch: nothing to install.

Upstream: no upstream issue filed.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, cast

import pydantic
from openai import AsyncOpenAI
from openai._models import BaseModel as OpenAIModel
from openai._types import ModelBuilderProtocol
from pydantic_ai.providers.openai import OpenAIProvider

from co_tui.shims.openai_sse import CoalescingSSEDecoder


@cache
def _validates(cast_to: type) -> bool:
    """Whether a response of this class may be validated: an SDK model that does not build
    itself. Decided once per class: the protocol check alone costs half a validation."""
    return issubclass(cast_to, OpenAIModel) and not issubclass(cast_to, ModelBuilderProtocol)


class ValidatingOpenAI(AsyncOpenAI):
    """An AsyncOpenAI that validates well-formed responses instead of constructing them, and
    reads a stream's text chunks that arrive together as one (co_tui/shims/openai_sse.py)."""

    def _make_sse_decoder(self) -> CoalescingSSEDecoder:
        return CoalescingSSEDecoder()

    def _process_response_data(self, *, data: object, cast_to: Any, response: Any) -> Any:
        if isinstance(data, dict) and isinstance(cast_to, type) and _validates(cast_to):
            try:
                return cast("type[OpenAIModel]", cast_to).model_validate(data)
            except pydantic.ValidationError:
                pass  # shaped off: construct it leniently, as the SDK does
        return super()._process_response_data(data=data, cast_to=cast_to, response=response)


class ValidatingOpenAIProvider(OpenAIProvider):
    """pydantic-ai's OpenAIProvider (its HTTP client and its lifecycle unchanged) with a
    ValidatingOpenAI client."""

    def _create_openai_client(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        http_client: Any,
        default_headers: Mapping[str, str] | None = None,
    ) -> AsyncOpenAI:
        client = super()._create_openai_client(
            base_url=base_url,
            api_key=api_key,
            http_client=http_client,
            default_headers=default_headers,
        )
        # Same class layout, one method more: copies (with_options) keep it too.
        client.__class__ = ValidatingOpenAI
        return client
