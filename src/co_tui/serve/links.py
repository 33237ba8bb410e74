"""The server's side of /serve link: a Unix socket where the apps it serves ask for a new
one-time link (co_tui.protocol.serve_links says how the two talk).

The socket sits in a folder only the user can enter (0700, under $XDG_RUNTIME_DIR when there
is one), is itself 0600, and goes with the server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from co_tui.protocol.serve_links import (
    ANSWER_TIMEOUT_S,
    LINKS_SOCKET_ENV,
    MAX_LINE,
    IssuedLink,
    LinkRequest,
    refusal_line,
)
from co_tui.serve.gate import LINK_TTL_S, TOKEN_PARAM, Gate

SOCKET_NAME = "links.sock"
MAX_SOCKET_PARENT = 80  # characters: a Unix socket's whole path must stay under 108


def _private_folder() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    usable = os.path.isdir(runtime) and len(runtime) <= MAX_SOCKET_PARENT
    return Path(tempfile.mkdtemp(prefix="co-tui-serve-", dir=runtime if usable else None))


class LinkDesk:
    """Hands out links for `gate` at `public_url` to whoever reaches the socket."""

    def __init__(self, gate: Gate, public_url: str) -> None:
        self.gate = gate
        self.public_url = public_url.rstrip("/")
        self._folder: Path | None = None
        self._server: asyncio.Server | None = None

    async def open(self) -> Path:
        """Listen, and name the socket in the environment the app processes inherit."""
        self._folder = _private_folder()
        path = self._folder / SOCKET_NAME  # the folder is 0700 (mkdtemp)
        self._server = await asyncio.start_unix_server(self._answer, path, limit=MAX_LINE)
        path.chmod(0o600)
        os.environ[LINKS_SOCKET_ENV] = str(path)
        return path

    async def close(self) -> None:
        os.environ.pop(LINKS_SOCKET_ENV, None)
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    def link_for(self, request: LinkRequest) -> IssuedLink:
        token = self.gate.issue(request.resume)
        url = f"{self.public_url}/?{TOKEN_PARAM}={token}"
        return IssuedLink(url, LINK_TTL_S, loopback_only=self.gate.loopback)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(ANSWER_TIMEOUT_S):
                line = await reader.readline()
                try:
                    answer = self.link_for(LinkRequest.decode(line)).encode()
                except ValueError as exc:
                    answer = refusal_line(str(exc))
                writer.write(answer)
                await writer.drain()
        except (OSError, TimeoutError, ValueError):
            pass  # a peer that hung up, stalled, or sent a line past MAX_LINE: nothing issued
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
