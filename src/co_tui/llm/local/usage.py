"""Token counts for the embedded model's streamed answers.

llama-cpp-python's server sends no `usage` in a stream (it ignores `stream_options`, which
pydantic-ai sends), and no server sends it for a stream co-tui stopped (a loop), so such an
answer would count 0 tokens. When a stream ends without usage, the prompt's text and the
answer are counted with the server's own tokenizer (llama.cpp's `POST /tokenize`,
llama-cpp-python's `POST /extras/tokenize/count`). The prompt is counted without the chat
template's few marker tokens per message: close, never over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai.usage import RequestUsage

from co_tui.llm.local.server import Endpoint

COUNT_TIMEOUT_S = 10.0


def prompt_text(messages: Sequence[ModelMessage]) -> str:
    """The text a request sends: the latest instructions and every part's text content."""
    requests = [m for m in messages if isinstance(m, ModelRequest)]
    instructions = requests[-1].instructions if requests else None
    pieces: list[str] = [instructions] if instructions else []
    for message in messages:
        for part in message.parts:
            content = getattr(part, "content", None)
            if isinstance(content, str):
                pieces.append(content)
            elif isinstance(content, Sequence) and isinstance(message, ModelRequest):
                pieces.extend(item for item in content if isinstance(item, str))
    return "\n".join(pieces)


def _llama_cpp_count(reply: dict[str, Any]) -> int:
    return len(reply["tokens"])


def _llama_cpp_python_count(reply: dict[str, Any]) -> int:
    return int(reply["count"])


# Where each engine's server counts tokens: llama.cpp's own (xllamacpp) and llama-cpp-python's.
_COUNTERS: tuple[tuple[str, str, Callable[[dict[str, Any]], int]], ...] = (
    ("/tokenize", "content", _llama_cpp_count),
    ("/extras/tokenize/count", "input", _llama_cpp_python_count),
)


async def count_tokens(endpoint: Endpoint, text: str) -> int:
    """Tokens in `text` by the server's tokenizer; 0 when the server cannot say."""
    if not text:
        return 0
    root = endpoint.base_url.removesuffix("/v1")
    headers = {"Authorization": f"Bearer {endpoint.api_key}"}
    async with httpx.AsyncClient(timeout=COUNT_TIMEOUT_S) as client:
        for path, field, count in _COUNTERS:
            try:
                reply = await client.post(f"{root}{path}", json={field: text}, headers=headers)
                reply.raise_for_status()
                return count(reply.json())
            except (httpx.HTTPError, KeyError, TypeError, ValueError):
                continue  # the other engine's endpoint, or no count: not worth failing for
    return 0


async def measured_usage(
    endpoint: Endpoint | None, usage: RequestUsage, prompt: str, answer: str
) -> RequestUsage:
    """`usage` when the server reported it, else the counts of `prompt` and `answer`."""
    if endpoint is None or usage.input_tokens or usage.output_tokens:
        return usage
    input_tokens = await count_tokens(endpoint, prompt)
    output_tokens = await count_tokens(endpoint, answer)
    return RequestUsage(input_tokens=input_tokens, output_tokens=output_tokens)
