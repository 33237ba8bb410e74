"""Streamed chunks are validated, not constructed (co_tui/shims/openai_chunks.py): the same
objects for well-formed data, the SDK's leniency for the rest, and the path is still worth
having: the SDK still constructs responses in Python."""

from __future__ import annotations

from typing import Any

import openai._base_client
import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionChunk

from co_tui.shims.openai_chunks import ValidatingOpenAI
from tests.llm.conftest import streamed_through_openai


def chunk(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
    base = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "fake",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None, "logprobs": None}],
    }
    return {**base, **extra}


TOOL_CALL = {
    "tool_calls": [
        {
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": {"name": "run_shell_command", "arguments": '{"cmd": "ls"}'},
        }
    ]
}
FINAL = {
    **chunk({}),
    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
}
WELL_FORMED = {
    "first": chunk({"role": "assistant", "content": ""}),
    "text": chunk({"content": "Hello, "}),
    "tool call": chunk(TOOL_CALL),
    "final with usage": FINAL,
    "vendor fields (llama.cpp timings)": chunk({"content": "x"}, timings={"predicted_n": 1}),
}
SHAPED_OFF = {
    "no id": {k: v for k, v in chunk({"content": "x"}).items() if k != "id"},
    "another object literal": chunk({"content": "x"}, object="chat.completion"),
    "a date for a number": chunk({"content": "x"}, created="yesterday"),
    "arguments as an object": chunk(
        {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": {"a": 1}}}]}
    ),
}


@pytest.fixture
def constructed(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """What the SDK's client built with its Python `construct_type`."""
    built: list[object] = []
    original = openai._base_client.construct_type

    def counting(*, type_: Any, value: object, **kw: Any) -> object:
        built.append(value)
        return original(type_=type_, value=value, **kw)

    monkeypatch.setattr(openai._base_client, "construct_type", counting)
    return built


def parsed(client: AsyncOpenAI, data: dict[str, Any]) -> ChatCompletionChunk:
    result = client._process_response_data(data=data, cast_to=ChatCompletionChunk, response=None)  # type: ignore[arg-type]
    assert isinstance(result, ChatCompletionChunk)
    return result


def clients() -> tuple[AsyncOpenAI, ValidatingOpenAI]:
    url = "http://127.0.0.1:9/v1"
    return AsyncOpenAI(base_url=url, api_key="x"), ValidatingOpenAI(base_url=url, api_key="x")


def test_upstream_still_constructs_responses_in_python(constructed: list[object]) -> None:
    # When this fails, the SDK no longer builds each chunk with construct_type: measure a
    # 20k-token answer, and if it is no slower, delete co_tui/shims/openai_chunks.py and its
    # two uses (llm/providers.py, llm/local/provider.py).
    sdk, _ = clients()
    parsed(sdk, WELL_FORMED["text"])
    assert constructed == [WELL_FORMED["text"]]


@pytest.mark.parametrize("data", WELL_FORMED.values(), ids=WELL_FORMED.keys())
def test_a_well_formed_chunk_is_validated_into_the_same_object(
    constructed: list[object], data: dict[str, Any]
) -> None:
    sdk, ours = clients()
    validated = parsed(ours, data)
    assert not constructed  # the compiled validator built it
    expected = parsed(sdk, data)
    assert validated == expected
    assert validated.model_dump(exclude_unset=True) == expected.model_dump(exclude_unset=True)


@pytest.mark.parametrize("data", SHAPED_OFF.values(), ids=SHAPED_OFF.keys())
def test_a_chunk_shaped_off_is_taken_as_the_sdk_takes_it(
    constructed: list[object], data: dict[str, Any]
) -> None:
    sdk, ours = clients()
    taken = parsed(ours, data)
    assert constructed == [data]  # validation refused it: constructed leniently
    assert taken == parsed(sdk, data)


@pytest.mark.usefixtures("allow_model_requests")
async def test_a_streamed_answer_arrives_whole_without_constructing_a_chunk(
    constructed: list[object],
) -> None:
    answer = "".join(f"word{n} " for n in range(500))
    async with streamed_through_openai(answer, chunks=500) as stream:
        response = stream.get()
    assert response.text == answer
    assert not constructed
