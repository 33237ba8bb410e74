"""/serve link in the app: served by `co-tui serve` (a real gate and link socket, in this
process), it shows a new one-time link that opens this conversation; not served, it says how
to get there. The browser end of it: tests/serve/test_browser_page.py."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.protocol.serve_links import LINKS_SOCKET_ENV
from co_tui.serve.gate import BrowserSession, Gate
from co_tui.serve.links import LinkDesk
from co_tui.tui.app import CoApp
from tests.tui.helpers import make_app, rendered, settle, text_stream

TALL = (120, 40)
PUBLIC_URL = "http://127.0.0.1:8123"
LINK = re.compile(r"http://127\.0\.0\.1:8123/\?token=([A-Za-z0-9_-]{43})")


@pytest.fixture
async def gate(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Gate]:
    """A serving gate's link socket, named in the environment as `co-tui serve` names it."""
    runtime = tempfile.mkdtemp(prefix="co-rt-")  # short: a Unix socket's path is limited
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
    monkeypatch.delenv(LINKS_SOCKET_ENV, raising=False)
    served = Gate("prefix", secure=False, loopback=True, ports=frozenset({8123}))
    desk = LinkDesk(served, PUBLIC_URL)
    await desk.open()
    try:
        yield served
    finally:
        await desk.close()
        shutil.rmtree(runtime, ignore_errors=True)


async def submit(pilot: Any, app: CoApp, text: str) -> str:
    app.chat.prompt.text = text
    await pilot.press("enter")
    await settle(pilot, app)
    return " ".join(rendered(app.chat.transcript).split())  # as read, across wrapped lines


async def test_a_link_opens_this_conversation_once(gate: Gate, tmp_path: Path) -> None:
    app = make_app(text_stream("PAPAYA noted"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        before = await submit(pilot, app, "/serve link")
        assert "opens co-tui (a new conversation)" in before  # nothing stored to open yet
        await submit(pilot, app, "remember papaya")
        shown = await submit(pilot, app, "/serve link")
        said = " ".join(shown.split())  # as one line: where the words wrap is the width's
        assert "opens this conversation" in said and "works once, within 10 minutes" in said
        assert "answers on this machine only" in said  # a loopback server: say so
        first, second = LINK.findall(before)[-1], LINK.findall(shown)[-1]

    opened = gate.redeem(second)
    assert isinstance(opened, BrowserSession) and opened.resume == app.session.session_id
    fresh = gate.redeem(first)
    assert isinstance(fresh, BrowserSession) and fresh.resume is None


async def test_not_served_it_says_how_to_serve(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv(LINKS_SOCKET_ENV, raising=False)
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=TALL) as pilot:
        shown = await submit(pilot, app, "/serve link")
        assert "co-tui serve" in shown and "token=" not in shown
        shown = await submit(pilot, app, "/serve everything")
        assert "not something /serve does" in shown and "usage: /serve link" in shown
