"""How an app served by `co-tui serve` asks its server for a one-time link for another browser.

The server listens on a Unix socket in a private folder (0700) and names it in
CO_TUI_SERVE_LINKS, which the app processes it starts inherit (nothing else sees it: the
sandboxes clear the environment, bubblewrap has its own /tmp). The app writes one JSON line,
the conversation the link should open; the server answers one JSON line, the link or why there
is none. Only a process of the user who runs the server can reach the socket.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass

LINKS_SOCKET_ENV = "CO_TUI_SERVE_LINKS"
MAX_LINE = 4096  # bytes: a request or an answer is far shorter
ANSWER_TIMEOUT_S = 5.0


class LinkUnavailable(Exception):
    """No link: this app is not served, or its server did not answer; the message says which."""


def _object(line: bytes) -> dict[str, object]:
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a JSON line: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


@dataclass(frozen=True)
class LinkRequest:
    """A link that opens `resume` (a stored session's id), or a new conversation (None)."""

    resume: str | None

    def encode(self) -> bytes:
        return json.dumps({"resume": self.resume}).encode() + b"\n"

    @classmethod
    def decode(cls, line: bytes) -> LinkRequest:
        resume = _object(line).get("resume")
        if resume is not None and not isinstance(resume, str):
            raise ValueError("resume must be a session id or null")
        return cls(resume)


@dataclass(frozen=True)
class IssuedLink:
    url: str
    valid_for_s: int  # it works once, within this many seconds
    loopback_only: bool  # the server answers on its own machine only

    def encode(self) -> bytes:
        fields = {"url": self.url, "valid_for_s": self.valid_for_s}
        return json.dumps({**fields, "loopback_only": self.loopback_only}).encode() + b"\n"

    @classmethod
    def decode(cls, line: bytes) -> IssuedLink:
        value = _object(line)
        if isinstance(error := value.get("error"), str):
            raise LinkUnavailable(f"co-tui serve refused: {error}")
        url, valid_for_s, loopback_only = (
            value.get("url"),
            value.get("valid_for_s"),
            value.get("loopback_only"),
        )
        if not (
            isinstance(url, str)
            and isinstance(valid_for_s, int)
            and isinstance(loopback_only, bool)
        ):
            raise ValueError("an answer needs url, valid_for_s and loopback_only")
        return cls(url, valid_for_s, loopback_only)


def refusal_line(reason: str) -> bytes:
    return json.dumps({"error": reason}).encode() + b"\n"


def served_links_socket() -> str | None:
    """The server's socket when this app is served by `co-tui serve`, else None."""
    return os.environ.get(LINKS_SOCKET_ENV) or None


async def request_link(resume: str | None) -> IssuedLink:
    """A new one-time link from the server that serves this app. Raises LinkUnavailable."""
    path = served_links_socket()
    if path is None:
        raise LinkUnavailable(
            "this app is not served to a browser. `co-tui serve` serves it; "
            "there, /serve link gives a link for another browser or device."
        )
    try:
        async with asyncio.timeout(ANSWER_TIMEOUT_S):
            reader, writer = await asyncio.open_unix_connection(path, limit=MAX_LINE)
            try:
                writer.write(LinkRequest(resume).encode())
                await writer.drain()
                line = await reader.readline()
            finally:
                writer.close()
    except (OSError, TimeoutError, ValueError) as exc:
        # ValueError: an answer longer than MAX_LINE
        why = str(exc) or type(exc).__name__
        raise LinkUnavailable(f"co-tui serve did not answer ({why})") from None
    try:
        return IssuedLink.decode(line)
    except ValueError as exc:
        raise LinkUnavailable(f"co-tui serve answered something else: {exc}") from None
