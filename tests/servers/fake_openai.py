"""A small OpenAI-compatible chat-completions server for tests, on 127.0.0.1.

It answers from a script, one entry per POST /v1/chat/completions, and records every
request body. Streaming requests get Server-Sent Events exactly as the OpenAI API sends
them, so the real `openai` client and pydantic-ai's OpenAIChatModel are exercised.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers.loopback import LoopbackServer


@dataclass
class Reply:
    """One scripted answer. kind: text | tool | error | stream_error. A tool reply with
    `text` streams that text before the call, in the same response."""

    kind: str
    text: str = ""
    chunks: int = 3
    tool_name: str = ""
    tool_args: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    error_body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # pause between stream chunks
    burst: bool = False  # the whole stream in one write: the client reads many chunks at once
    stall_before_s: float = 0.0  # silence after the request, before any header
    stall_after_first_s: float = 0.0  # silence after the first streamed chunk
    # Faults in the stream itself (kinds in FAULTS; see _send_fault):
    stall_after_headers_s: float = 0.0  # silence after the headers, before any chunk
    garbage: str = ""  # kind garbage: the `data:` payload that is not a chunk


def text(answer: str, chunks: int = 3, delay_s: float = 0.0, burst: bool = False) -> Reply:
    return Reply("text", text=answer, chunks=chunks, delay_s=delay_s, burst=burst)


def stall_before_headers(seconds: float, answer: str = "Too late.") -> Reply:
    """Accepts the request, then says nothing for `seconds` (then answers)."""
    return Reply("text", text=answer, stall_before_s=seconds)


def stall_mid_stream(seconds: float, answer: str = "Half an answer, then nothing") -> Reply:
    """Sends the headers and the first chunk, then nothing for `seconds` (then the rest)."""
    return Reply("text", text=answer, chunks=4, stall_after_first_s=seconds)


def error_mid_stream(partial: str, message: str = "the server fell over") -> Reply:
    """Streams `partial` (in 3 chunks), then an error object inside the 200 stream, as
    OpenAI-compatible servers report a failure after the answer began."""
    body = {"error": {"message": message, "type": "server_error", "code": "server_error"}}
    return Reply("stream_error", text=partial, error_body=body)


# -- Faults in a streamed answer: each sends the role chunk and `partial`, and never a
# finish_reason or `data: [DONE]` unless said otherwise (_send_fault).
FAULTS = ("stall_after_headers", "cut_close", "cut_chunked", "cut_mid_chunk", "garbage")


def stall_after_headers(seconds: float, answer: str = "Too late.") -> Reply:
    """Sends the 200 headers, then nothing for `seconds` (then the whole answer)."""
    return Reply("stall_after_headers", text=answer, stall_after_headers_s=seconds)


def cut_close(partial: str) -> Reply:
    """A close-delimited body (no Content-Length, no Transfer-Encoding, as HTTP/1.0 sends
    one): `partial`, then the server closes the connection. To the client the body ended."""
    return Reply("cut_close", text=partial)


def cut_chunked(partial: str) -> Reply:
    """A chunked body that ends properly (the 0-chunk) after `partial`."""
    return Reply("cut_chunked", text=partial)


def cut_mid_chunk(partial: str) -> Reply:
    """A chunked body whose last chunk is dropped halfway: the connection closes inside it."""
    return Reply("cut_mid_chunk", text=partial)


def garbage(partial: str, payload: str = "this is not JSON") -> Reply:
    """`partial`, then `data: <payload>` (not a chunk), then a proper ending."""
    return Reply("garbage", text=partial, garbage=payload)


def tool_call(name: str, **args: Any) -> Reply:
    return Reply("tool", tool_name=name, tool_args=args)


def text_then_tool_call(
    answer: str, name: str, chunks: int = 3, delay_s: float = 0.0, **args: Any
) -> Reply:
    """`answer` streamed in `chunks` pieces `delay_s` apart, then a call of tool `name`: one
    response, as a model that says what it is about to do before it asks for a tool."""
    return Reply(
        "tool", text=answer, chunks=chunks, delay_s=delay_s, tool_name=name, tool_args=args
    )


def error(status: int, message: str, code: str | None = None, **headers: str) -> Reply:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    return Reply("error", status=status, error_body=body, headers=headers)


@dataclass
class Received:
    at: float
    body: dict[str, Any]


class FakeOpenAIServer(LoopbackServer):
    def __init__(
        self,
        script: list[Reply] | None = None,
        default: Reply | None = None,
        models: tuple[str, ...] = ("fake",),
    ) -> None:
        self.script = list(script or [])
        self.models = models  # what GET /v1/models lists
        self.default = default or text("ok")
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        super().__init__(self._handler())

    def _next(self) -> Reply:
        with self._lock:
            return self.script.pop(0) if self.script else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(
                self, status: int, payload: object, headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    data = [{"id": name, "object": "model"} for name in server.models]
                    self._json(200, {"object": "list", "data": data})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(Received(time.monotonic(), body))
                reply = server._next()
                time.sleep(reply.stall_before_s)
                if reply.kind == "error":
                    self._json(reply.status, reply.error_body, reply.headers)
                    return
                model = body.get("model", "fake")
                if reply.kind in FAULTS:
                    _send_fault(self, reply, model)
                    return
                if body.get("stream"):
                    self._stream(reply, model)
                else:
                    self._json(200, _completion(reply, model))

            def _stream(self, reply: Reply, model: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                failing = reply.kind == "stream_error"
                chunks = _partial_then_error(reply, model) if failing else _chunks(reply, model)
                try:
                    if reply.burst:
                        self.wfile.write(b"".join(map(_event, chunks)))
                    else:
                        self._trickle(reply, chunks)
                    if not failing:
                        self.wfile.write(b"data: [DONE]\n\n")
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting: what a stalled provider is for

            def _trickle(self, reply: Reply, chunks: Iterator[dict[str, Any]]) -> None:
                """One write per chunk, with the reply's pauses."""
                for n, chunk in enumerate(chunks):
                    self.wfile.write(_event(chunk))
                    self.wfile.flush()
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    if n == 1:  # the role chunk, then the first words: then silence
                        time.sleep(reply.stall_after_first_s)

        return Handler


def _event(chunk: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _split(s: str, n: int) -> list[str]:
    if not s:
        return []
    size = max(1, -(-len(s) // max(1, n)))
    return [s[i : i + size] for i in range(0, len(s), size)]


def _base(model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }


_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _chunks(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    if reply.kind == "text":
        yield {
            **_base(model),
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}],
        }
        for piece in _split(reply.text, reply.chunks):
            yield {**_base(model), "choices": [{"index": 0, "delta": {"content": piece}}]}
        yield {
            **_base(model),
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": _USAGE,
        }
    else:
        call = {
            "index": 0,
            "id": f"call_{reply.tool_name}",
            "type": "function",
            "function": {"name": reply.tool_name, "arguments": json.dumps(reply.tool_args)},
        }
        delta: dict[str, Any] = {"role": "assistant", "tool_calls": [call]}
        if reply.text:  # the words before the call, as a text reply streams them (no stop)
            *words, _stop = _chunks(Reply("text", text=reply.text, chunks=reply.chunks), model)
            yield from words
            delta = {"tool_calls": [call]}  # the role came with the words
        yield {**_base(model), "choices": [{"index": 0, "delta": delta}]}
        yield {
            **_base(model),
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
            "usage": _USAGE,
        }


def _partial_then_error(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    """error_mid_stream: the role chunk, the partial text, then the error object."""
    yield {**_base(model), "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    for piece in _split(reply.text, reply.chunks):
        yield {**_base(model), "choices": [{"index": 0, "delta": {"content": piece}}]}
    yield reply.error_body or {}


def _send_fault(handler: BaseHTTPRequestHandler, reply: Reply, model: str) -> None:
    """Answers with one of FAULTS (streamed whatever the request asked)."""
    chunked = reply.kind in ("cut_chunked", "cut_mid_chunk")
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    if chunked:
        handler.send_header("Transfer-Encoding", "chunked")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    handler.wfile.flush()
    time.sleep(reply.stall_after_headers_s)
    pieces = _split(reply.text, reply.chunks)
    events = [{**_base(model), "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    events += [{**_base(model), "choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    frames = [f"data: {json.dumps(e)}\n\n".encode() for e in events]
    if reply.kind in ("stall_after_headers", "garbage"):
        if reply.kind == "garbage":
            frames.append(f"data: {reply.garbage}\n\n".encode())
        end = {**_base(model), "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        frames += [f"data: {json.dumps(end)}\n\n".encode(), b"data: [DONE]\n\n"]
    last = frames.pop() if reply.kind == "cut_mid_chunk" else b""
    try:
        for frame in frames:
            handler.wfile.write(
                f"{len(frame):x}\r\n".encode() + frame + b"\r\n" if chunked else frame
            )
            handler.wfile.flush()
        if reply.kind == "cut_chunked":
            handler.wfile.write(b"0\r\n\r\n")
        elif reply.kind == "cut_mid_chunk":  # announce the whole chunk, send half, hang up
            handler.wfile.write(f"{len(last):x}\r\n".encode() + last[: len(last) // 2])
        handler.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):
        pass


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    finish = "stop"
    if reply.kind == "text":
        message["content"] = reply.text
    else:
        message["content"] = reply.text or None
        message["tool_calls"] = [
            {
                "id": f"call_{reply.tool_name}",
                "type": "function",
                "function": {"name": reply.tool_name, "arguments": json.dumps(reply.tool_args)},
            }
        ]
        finish = "tool_calls"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _USAGE,
    }


@contextmanager
def serve(
    script: list[Reply] | None = None, default: Reply | None = None
) -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer(script, default).start()
    try:
        yield server
    finally:
        server.stop()
