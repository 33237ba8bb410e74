"""The page `co-tui serve` gives a browser, in headless Chromium: keys reach the app without a
click (also after the session ended and restarted), and nothing is loaded from anywhere but
the server on 127.0.0.1; a second browser joins the conversation with a one-time link asked
from the app (/serve link), without a restart."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.serve.browser import Browser, require_browser
from tests.serve.process import ServeProcess, free_port
from tests.servers.fake_openai import text

pytestmark = pytest.mark.browser


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[tuple[Browser, ServeProcess]]:
    require_browser()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    server = ServeProcess(workspace, free_port())
    chromium = Browser()
    try:
        yield chromium, server
    finally:
        chromium.close()
        server.stop()


def test_keys_reach_the_prompt_without_a_click(browser: tuple[Browser, ServeProcess]) -> None:
    chromium, server = browser
    chromium.open(server.url())
    chromium.wait_for(lambda t: "Ask anything" in t, "the prompt")
    chromium.type_without_clicking("typed at once")
    chromium.wait_for(lambda t: "typed at once" in t, "the keys in the prompt")
    assert chromium.focused() == "textarea.xterm-helper-textarea"

    # The app ends (Ctrl+Q): Restart has the keyboard, Enter starts a new app, and the new
    # app's prompt has the keyboard again.
    chromium.press_ctrl("q")
    chromium.wait_until("document.body.classList.contains('-closed')", "the session to end")
    chromium.wait_until("document.activeElement.id === 'restart'", "Restart to have the keys")
    chromium.type_without_clicking("\n")
    chromium.wait_for(lambda t: "Ask anything" in t, "the prompt after the restart")
    chromium.type_without_clicking("typed after the restart")
    chromium.wait_for(lambda t: "typed after the restart" in t, "the keys after the restart")


def test_nothing_loads_from_outside_the_machine(browser: tuple[Browser, ServeProcess]) -> None:
    chromium, server = browser
    url = server.url()
    chromium.open(url)
    chromium.wait_for(lambda t: "Ask anything" in t, "the prompt")
    chromium.wait_until("document.fonts.check(\"16px 'Roboto Mono'\")", "the terminal's font")

    # Chromium's own pages (its new tab, before the link opened) are not the page's doing.
    requested = [r.url for r in chromium.requests() if not r.document.startswith("chrome:")]
    origin = urlsplit(url).netloc
    elsewhere = [u for u in requested if urlsplit(u).netloc != origin]
    assert not elsewhere, f"requests that left the server: {elsewhere}"
    assert any(u.endswith(".ttf") for u in requested)  # the font came, from here
    assert any(u.startswith("ws://") for u in requested)
    refused = [m for m in chromium.console() if "Content Security Policy" in m]
    assert not refused, f"the page needs something its policy forbids: {refused}"


LINK = re.compile(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{43}")


def test_a_second_browser_joins_the_conversation_with_a_link_from_the_app(
    tmp_path: Path,
) -> None:
    require_browser()
    server = ServeProcess(tmp_path, free_port(), [text("Noted: PAPAYA-ANSWER")])
    first = Browser()
    second: Browser | None = None
    try:
        first.open(server.url())
        first.wait_for(lambda t: "Ask anything" in t, "the prompt")
        first.type_without_clicking("remember the word papaya")
        first.wait_for(lambda t: "remember the word papaya" in t, "the typed prompt")
        first.type_without_clicking("\n")
        first.wait_for(lambda t: "PAPAYA-ANSWER" in t, "the answer")
        first.type_without_clicking("/serve link")
        first.wait_for(lambda t: "/serve link" in t, "the typed command")
        first.type_without_clicking("\n")
        shown = first.wait_for(lambda t: LINK.search(t) is not None, "the new link")
        link = LINK.findall(shown)[-1]
        assert "opens this conversation" in shown and "works once" in shown

        second = Browser()  # its own profile: another device, as far as cookies go
        second.open(link)
        text_there = second.wait_for(lambda t: "PAPAYA-ANSWER" in t, "the same conversation")
        assert "remember the word papaya" in text_there
        second.type_without_clicking("typed on the second device")
        second.wait_for(lambda t: "typed on the second device" in t, "keys on the second device")

        second.open(link)  # once only
        assert "already used" in second.driver.page_source
    finally:
        first.close()
        if second is not None:
            second.close()
        server.stop()
