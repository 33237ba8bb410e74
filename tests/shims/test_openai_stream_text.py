"""pydantic-ai's OpenAI stream accumulates its text linearly (co_tui/shims/openai_stream_text.py),
and the shim is still needed: upstream still grows the attribute with `+=`."""

from __future__ import annotations

import inspect

import pytest
from pydantic_ai.models.openai import OpenAIStreamedResponse

from co_tui.shims.openai_stream_text import TextSoFar
from tests.llm.conftest import streamed_through_openai


def test_upstream_still_concatenates_the_attribute() -> None:
    # When this fails, pydantic-ai no longer copies the whole answer per chunk:
    # delete co_tui/shims/openai_stream_text.py and its install in co_tui/shims/__init__.py.
    source = inspect.getsource(OpenAIStreamedResponse._map_text_delta)
    assert "self._raw_text_content += content" in source


@pytest.mark.usefixtures("allow_model_requests")
async def test_a_many_chunk_answer_arrives_whole_and_is_kept_whole() -> None:
    answer = "".join(f"line {n}: {'x' * 90}\n" for n in range(2000))
    async with streamed_through_openai(answer, chunks=2000) as stream:
        response = stream.get()
        kept = stream._raw_text_content  # type: ignore[attr-defined]
    assert response.text == answer
    assert isinstance(kept, TextSoFar)
    assert kept == answer
    assert answer == kept


def test_text_so_far_reads_as_the_text_it_was_given() -> None:
    text_so_far = TextSoFar("ab")
    text_so_far += "c"
    text_so_far += "d"
    assert text_so_far == "abcd"
    part_content = "abcd"  # upstream compares with the str on the left
    assert part_content == text_so_far
    assert text_so_far != "abc"
    assert str(text_so_far) == "abcd"
    assert text_so_far == TextSoFar("abcd")
