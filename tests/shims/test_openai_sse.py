"""Text chunks that arrive together are read as one (co_tui/shims/openai_sse.py): however a
stream is split into reads, the same events come out as from the SDK's own decoder, only with
neighbouring text chunks joined; nothing waits for a read that has not come; and a burst of
chunks reaches pydantic-ai as a few deltas with the whole answer."""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import AsyncIterator
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai._streaming import ServerSentEvent, SSEDecoder
from pydantic_ai.messages import ModelResponseStreamEvent, PartDeltaEvent

from co_tui.shims.openai_sse import TEXT_FIELDS, CoalescingSSEDecoder
from tests.llm.conftest import streamed_through_openai
from tests.shims.test_openai_chunks import FINAL, TOOL_CALL, chunk
from tests.sizes import examples

ROLE = chunk({"role": "assistant", "content": ""})


def text_chunk(text: str, field: str = "content", **extra: object) -> dict[str, object]:
    return chunk({field: text}, **extra)


def data(payload: dict[str, object]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


async def decoded(decoder: SSEDecoder, reads: list[bytes]) -> list[ServerSentEvent]:
    async def source() -> AsyncIterator[bytes]:
        for read in reads:
            yield read

    return [sse async for sse in decoder.aiter_bytes(source())]


def fields(events: list[ServerSentEvent]) -> list[tuple[object, ...]]:
    return [(sse.event, sse.data, sse.id, sse.retry) for sse in events]


def runs(events: list[ServerSentEvent]) -> list[tuple[str, str]]:
    """Each event as (all of it but its text, its text), with neighbours equal but for their
    text joined: what must be the same whichever text chunks were joined."""
    out: list[tuple[str, str]] = []
    for sse in events:
        rest, text = without_text(sse)
        if out and out[-1][0] == rest:
            out[-1] = (rest, out[-1][1] + text)
        else:
            out.append((rest, text))
    return out


def without_text(sse: ServerSentEvent) -> tuple[str, str]:
    meta = (sse.event, sse.id, sse.retry)
    try:
        payload = json.loads(sse.data)
        delta = payload["choices"][0]["delta"]
        (field,) = [f for f in TEXT_FIELDS if isinstance(delta.get(f), str)]
    except (ValueError, LookupError, TypeError, AttributeError):
        return json.dumps([meta, sse.data]), ""
    text, delta[field] = delta[field], ""
    return json.dumps([meta, field, payload], sort_keys=True), text


def split(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    return [stream[a:b] for a, b in pairwise(points)]


async def test_a_burst_of_text_chunks_comes_out_as_one_event_with_all_the_text() -> None:
    words = [f"word{n} " for n in range(200)]
    stream = data(ROLE) + b"".join(data(text_chunk(w)) for w in words) + data(FINAL)
    events = await decoded(CoalescingSSEDecoder(), [stream, b"data: [DONE]\n\n"])
    assert [json.loads(e.data) for e in events[:1] + events[2:-1]] == [ROLE, FINAL]
    assert json.loads(events[1].data) == text_chunk("".join(words))
    assert events[-1].data == "[DONE]"


async def test_what_differs_in_more_than_its_text_is_never_joined() -> None:
    stream = b"".join(
        data(c)
        for c in (
            text_chunk("a"),
            text_chunk("b", field="reasoning_content"),
            text_chunk("c", created=1700000001),
            text_chunk("d", timings={"predicted_n": 1}),  # a field this module does not know
            text_chunk("e", timings={"predicted_n": 1}),
            chunk({"content": "f", **TOOL_CALL}),
            {"error": {"message": "the server fell over"}},
            text_chunk("g"),
        )
    )
    stream += b"event: ping\ndata: {}\n\n: a comment\n\n" + data(text_chunk("h"))
    sdk = await decoded(SSEDecoder(), [stream])
    assert fields(await decoded(CoalescingSSEDecoder(), [stream])) == fields(sdk)


async def test_each_read_is_passed_on_before_the_next_one_is_asked_for() -> None:
    reads = [data(text_chunk(f"piece {n} ")) for n in range(5)]
    asked = 0
    seen_at: list[int] = []

    async def source() -> AsyncIterator[bytes]:
        nonlocal asked
        for read in reads:
            asked += 1
            yield read

    async for _ in CoalescingSSEDecoder().aiter_bytes(source()):
        seen_at.append(asked)
    assert seen_at == [1, 2, 3, 4, 5]  # one event per read, none held for the next


EVENT = st.one_of(
    st.builds(text_chunk, st.text(max_size=8)),
    st.builds(text_chunk, st.text(max_size=8), st.just("reasoning_content")),
    st.builds(text_chunk, st.text(max_size=8), created=st.sampled_from([1700000000, 1])),
    st.sampled_from([ROLE, FINAL, chunk(TOOL_CALL), {"error": {"message": "gone"}}]),
)
LINE_END = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def sse_streams(draw: st.DrawFn) -> bytes:
    parts = []
    for payload in draw(st.lists(EVENT, max_size=30)):
        end = draw(LINE_END)
        extra = draw(st.sampled_from(["", f": keep-alive{end}", f"event: ping{end}"]))
        parts.append(f"{extra}data: {json.dumps(payload, ensure_ascii=False)}{end}{end}")
    return "".join(parts).encode()


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=sse_streams(), cuts=st.lists(st.integers(min_value=0), max_size=12))
async def test_any_split_into_reads_gives_the_sdks_events_with_text_joined(
    stream: bytes, cuts: list[int]
) -> None:
    reads = split(stream, cuts)
    sdk = await decoded(SSEDecoder(), reads)
    ours = await decoded(CoalescingSSEDecoder(), reads)
    assert runs(ours) == runs(sdk)
    assert len(ours) <= len(sdk)


def test_the_sdks_decoder_is_still_the_one_mirrored() -> None:
    # When this fails, openai changed SSEDecoder.aiter_bytes: compare it with
    # CoalescingSSEDecoder.aiter_bytes (same line splitting, same events, one coalesce step
    # per read), adapt that, then record the new digest here.
    source = inspect.getsource(SSEDecoder.aiter_bytes)
    digest = hashlib.sha256(source.encode()).hexdigest()
    assert digest == "35a8168f03eedf5fea7852e947508e06d2b009919a6a001791b6bfb04d333a8e"


@pytest.mark.usefixtures("allow_model_requests")
async def test_a_burst_reaches_pydantic_ai_as_a_few_deltas_with_the_whole_answer() -> None:
    answer = "".join(f"word{n} " for n in range(5000))
    events: list[ModelResponseStreamEvent] = []
    async with streamed_through_openai(answer, chunks=5000, burst=True, events=events) as stream:
        response = stream.get()
    assert response.text == answer
    deltas = [e for e in events if isinstance(e, PartDeltaEvent)]
    assert 0 < len(deltas) < 100  # 5,000 chunks, in a few reads of up to 64 KiB
