"""The lifecycle every test HTTP server shares: bound to 127.0.0.1 on a free port, served
from a daemon thread, stopped and closed at the end. Subclasses supply the handler."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class _QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that stops reading (a size cap, a closed test) resets the connection."""


class LoopbackServer:
    def __init__(self, handler: type[BaseHTTPRequestHandler], *, quiet: bool = False) -> None:
        server_class = _QuietHTTPServer if quiet else ThreadingHTTPServer
        self._server = server_class(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
