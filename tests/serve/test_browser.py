"""`co-tui serve` in headless Chromium: type a prompt, watch the answer (from the fake OpenAI
server the app is configured for) stream, approve a shell command in the modal with `y`, and
see that it ran. Saves a screenshot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.serve.browser import Browser, require_browser
from tests.serve.process import ServeProcess, free_port
from tests.serve.scripted import FINAL, MARKER_FILE, replies

pytestmark = pytest.mark.browser
SCREENSHOT = ROOT / "bench" / "results" / "serve-browser.png"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ServeProcess, Path]]:
    require_browser()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    server = ServeProcess(workspace, free_port(), replies())
    try:
        yield server, workspace
    finally:
        server.stop()


def test_prompt_stream_and_approve_in_browser(served: tuple[ServeProcess, Path]) -> None:
    server, workspace = served
    url = server.url()
    assert url.startswith("http://127.0.0.1:")
    browser = Browser()
    try:
        browser.open(url)
        assert "token" not in browser.driver.current_url  # traded for a cookie
        browser.wait_for(lambda t: "Ask anything" in t, "the prompt")
        browser.type("please make the file")
        # Enter only once the prompt shows the text: keys that arrive in one burst can reach
        # the submit binding before the text area has applied the keys before it.
        browser.wait_for(lambda t: "please make the file" in t, "the typed prompt")
        browser.type("\n")
        text = browser.wait_for(lambda t: "STREAM-OK" in t, "the streamed answer")
        assert "Streaming from the served app." in text
        browser.wait_for(lambda t: "approve all" in t.lower(), "the approval modal")
        assert not (workspace / MARKER_FILE).exists()  # nothing runs before the decision
        # As a person would: decide once the dialog's keys are active (its hint line changes).
        browser.wait_for(
            lambda t: t.rfind("PgUp PgDn scroll") > t.rfind("keys arm in a moment") >= 0,
            "the approval keys to become active",
        )
        browser.type("y")
        browser.wait_for(lambda t: FINAL in t, "the answer after the command")
        assert (workspace / MARKER_FILE).exists()
        browser.screenshot(SCREENSHOT)
    finally:
        browser.close()
    assert SCREENSHOT.stat().st_size > 10_000
    output = "".join(server.lines)
    assert output.count("token=") == 1  # printed once, in the address line only
