"""Streamed text chunks that arrived together are handled as one (an alternative path around
an upstream cost).

Every chunk of a streamed answer goes through the whole of pydantic-ai's stream machinery on
its own: the OpenAI mapping, the parts manager, the special-token restorer, the agent's event
stream with its anyio locks and cancel scopes, and co-tui's events after that. Profiled with
`co-tui -p` against the fake server, 20,000 token-sized chunks spent 85% of the streaming
time there and 12% reading and parsing the chunks themselves. When a provider sends chunks
faster than that machinery takes them, they pile up in the socket and one read brings many.

`CoalescingSSEDecoder` is the openai SDK's own SSE decoder with one step more: the events of
one network read that differ only in their text (consecutive content, or reasoning, deltas
of one choice with nothing else in them) become one event carrying the joined text. Nothing
waits for more data: what one read brought is passed on at once, as before, so a slow stream
is handled chunk by chunk exactly as without it, and a fast one in as many steps as reads.
Any event with more in it (a role, a tool call, a finish reason, usage, an error, a field
this module does not know) is passed on untouched and in order.

Each event it yields reads its data as a JSON object or not at all (`ChunkEvent.json`): the
SDK passes any JSON value on as a chunk, so `data: [1,2]` or `data: null` ended a turn with an
AttributeError deep in pydantic-ai; now it is the decode error pydantic-ai maps to a provider
fault (retried, and named), as `data: not JSON` always was.

tests/shims/test_openai_sse.py checks that any way of splitting a stream into reads gives the
same events, text joined, as the SDK's decoder, and fails when the SDK's decoder changes the
steps mirrored here. A subclass used by ValidatingOpenAI, not a patch: nothing to install.

Upstream: no upstream issue filed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from openai._streaming import ServerSentEvent, SSEDecoder, _SSELineDecoder

TEXT_FIELDS = ("content", "reasoning_content", "reasoning")
# What a chunk may hold, besides its text, and still be joined to its neighbour.
CHUNK_KEYS = frozenset({"id", "object", "created", "model", "system_fingerprint", "choices"})
CHOICE_KEYS = frozenset({"index", "delta", "finish_reason", "logprobs"})
DELTA_KEYS = frozenset({"role", "refusal", "tool_calls", "function_call", *TEXT_FIELDS})


class ChunkEvent(ServerSentEvent):
    """A server-sent event whose data must be a JSON object, as every chunk and error is."""

    def json(self) -> Any:
        data = json.loads(self.data)
        if not isinstance(data, dict):
            kind = type(data).__name__ if data is not None else "null"
            raise json.JSONDecodeError(f"a stream chunk that is not a JSON object ({kind})", "", 0)
        return data


def _checked(sse: ServerSentEvent) -> ServerSentEvent:
    sse.__class__ = ChunkEvent  # the same object, one method stricter: no copy per chunk
    return sse


class CoalescingSSEDecoder(SSEDecoder):
    """The SDK's SSEDecoder (same lines, same events); each read's text runs joined, and
    each event's data read as a JSON object only (ChunkEvent)."""

    async def aiter_bytes(self, iterator: AsyncIterator[bytes]) -> AsyncIterator[ServerSentEvent]:
        lines = _SSELineDecoder()
        try:
            async for chunk in iterator:
                for sse in coalesce(list(self._decode_lines(lines.feed(chunk)))):
                    yield _checked(sse)
            for sse in self._decode_lines(lines.finish()):
                yield _checked(sse)
        finally:
            self._reset()


class _TextChunk:
    """A chunk whose only news is a piece of text in one field of its one choice's delta,
    held with that text taken out, and the texts of the chunks joined to it."""

    __slots__ = ("data", "delta", "field", "source", "texts")

    def __init__(self, source: ServerSentEvent, data: dict[str, Any], field: str) -> None:
        self.source = source
        self.data = data  # with the text taken out: what a neighbour must equal
        self.delta: dict[str, Any] = data["choices"][0]["delta"]
        self.field = field
        self.texts: list[str] = [self.delta[field]]
        self.delta[field] = ""

    def takes(self, other: _TextChunk) -> bool:
        """Join `other` when it differs from this run in its text alone; say whether it did."""
        if other.field != self.field or other.data != self.data:
            return False
        self.texts.extend(other.texts)
        return True

    def event(self) -> ServerSentEvent:
        if len(self.texts) == 1:
            return self.source
        self.delta[self.field] = "".join(self.texts)
        return ServerSentEvent(data=json.dumps(self.data, ensure_ascii=False))


def coalesce(events: list[ServerSentEvent]) -> list[ServerSentEvent]:
    """The events in order, each run of text chunks that differ only in their text as one."""
    if len(events) < 2:
        return events
    out: list[ServerSentEvent] = []
    run: _TextChunk | None = None
    for sse in events:
        chunk = _text_chunk(sse)
        if run is not None and chunk is not None and run.takes(chunk):
            continue
        if run is not None:
            out.append(run.event())
        run = chunk
        if chunk is None:
            out.append(sse)
    if run is not None:
        out.append(run.event())
    return out


def _text_chunk(sse: ServerSentEvent) -> _TextChunk | None:
    if sse.event is not None or sse.id is not None or sse.retry is not None:
        return None
    if not sse.data.startswith("{"):
        return None
    try:
        data = json.loads(sse.data)
    except ValueError:
        return None
    choices = data.get("choices")
    if data.keys() - CHUNK_KEYS or not isinstance(choices, list) or len(choices) != 1:
        return None
    choice = choices[0]
    if not isinstance(choice, dict) or choice.keys() - CHOICE_KEYS:
        return None
    delta = choice.get("delta")
    if choice.get("finish_reason") is not None or choice.get("logprobs") is not None:
        return None
    if not isinstance(delta, dict) or delta.keys() - DELTA_KEYS:
        return None
    texts = [f for f in TEXT_FIELDS if delta.get(f) is not None]
    if len(texts) != 1 or not isinstance(delta[texts[0]], str):
        return None
    if any(delta.get(k) is not None for k in ("refusal", "tool_calls", "function_call")):
        return None
    return _TextChunk(sse, data, texts[0])
