"""A threaded HTTP server on 127.0.0.1 that records requests and injects scripted failures.

Subclasses implement `route`; tests read `received` and call `fail(...)` before a call.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.servers.loopback import LoopbackServer


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes

    def q(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode()).items()}

    def params(self) -> dict[str, Any]:
        """Form, JSON or query parameters, whichever the client sent."""
        if self.headers.get("content-type", "").startswith("application/json"):
            return dict(self.json() or {})
        if self.body:
            return dict(self.form())
        return {k: v[0] for k, v in self.query.items()}


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; bytes/str as is
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None

    def encoded(self) -> tuple[bytes, str]:
        if isinstance(self.body, bytes):
            return self.body, self.content_type or "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode(), self.content_type or "text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), self.content_type or "application/json"


@dataclass
class _Failure:
    path_prefix: str
    reply: Reply
    remaining: int


class FakeServer(LoopbackServer):
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._failures: list[_Failure] = []
        self._lock = threading.Lock()
        super().__init__(self._handler())

    def fail(
        self,
        path_prefix: str,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """The next `times` requests whose path starts with `path_prefix` get this reply."""
        with self._lock:
            self._failures.append(_Failure(path_prefix, Reply(status, body, headers or {}), times))

    def requests_to(self, path_prefix: str, method: str | None = None) -> list[Received]:
        with self._lock:
            return [
                r
                for r in self.received
                if r.path.startswith(path_prefix) and (method is None or r.method == method)
            ]

    def route(self, req: Received) -> Reply:  # pragma: no cover - subclasses
        raise NotImplementedError

    def _scripted_failure(self, req: Received) -> Reply | None:
        with self._lock:
            for failure in self._failures:
                if failure.remaining > 0 and req.path.startswith(failure.path_prefix):
                    failure.remaining -= 1
                    return failure.reply
        return None

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        req = Received(
            handler.command,
            parts.path,
            parse_qs(parts.query),
            {k.lower(): v for k, v in handler.headers.items()},
            body,
        )
        with self._lock:
            self.received.append(req)
        reply = self._scripted_failure(req)
        if reply is None:
            try:
                reply = self.route(req)
            except Exception as exc:  # a bug in the fake: make it visible as a 500
                reply = Reply(500, {"error": {"code": 500, "message": f"fake: {exc!r}"}})
        data, content_type = reply.encoded()
        handler.send_response(reply.status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake._handle(self)

            do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

        return Handler
