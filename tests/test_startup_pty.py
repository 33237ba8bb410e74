"""The real `co-tui` starting on a pseudo-terminal: its first frame comes before the settings
machinery (pydantic) and the session's modules are loaded, keys typed as it shows reach the
prompt in order, and settings that cannot be loaded end the app with their error and exit
code 2, the terminal given back."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tests.servers.fake_openai import serve, text
from tests.test_peers_pty import on_a_pty
from tests.test_signals import CLI, env_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")

LEAVE_ALTERNATE_SCREEN = b"\x1b[?1049l"
PLACEHOLDER = b"Ask anything"  # in the prompt: on the terminal once the first frame is drawn
CTRL_Q = b"\x11"
# A line of Python's import log (-X importtime): "import time: self | cumulative | name".
IMPORT_LOG_LINE = re.compile(rb"import time:.*\|\s+([\w.]+)\r?$", re.M)


@pytest.mark.e2e
def test_the_first_frame_comes_before_the_settings_machinery(
    tmp_path: Path, isolated_env: Path
) -> None:
    # Python's import log goes to the terminal too, in the order things happened: the modules
    # named before the first frame's placeholder were loaded before the first frame.
    argv = [sys.executable, "-X", "importtime", CLI[0]]
    with on_a_pty(argv, tmp_path, env_for("http://127.0.0.1:9")) as term:
        term.shows(PLACEHOLDER, "the first frame")
        screen = term.drain()
        term.type(CTRL_Q)
        wait_for(term.ended, "the app to quit")
    before_the_frame = screen[: screen.index(PLACEHOLDER)]
    loaded = [name.decode() for name in IMPORT_LOG_LINE.findall(before_the_frame)]
    assert "textual.app" in loaded and "co_tui.tui.app" in loaded
    assert not [name for name in loaded if name.split(".")[0].startswith("pydantic")]
    assert "co_tui.config.settings" not in loaded
    # Nor the session and its turn events: the screen has no session to show yet.
    assert "co_tui.session.chat" not in loaded
    assert "co_tui.protocol.events" not in loaded


@pytest.mark.e2e
def test_keys_typed_at_the_first_frame_reach_the_prompt_in_order(
    tmp_path: Path, isolated_env: Path
) -> None:
    """The settings load right after the first frame, in a thread: what is typed meanwhile
    lands in the prompt in order, and what is sent waits for them."""
    server_running = serve(default=text("Typed at once, answered."))
    with server_running as server, on_a_pty(CLI, tmp_path, env_for(server.url)) as term:
        term.shows(b"Ask anything", "the first frame")
        term.type(b"typed at once")
        term.shows(b"typed at once", "the words in the prompt")
        term.shows(b"subprocess", "the app to load")
        term.type(b"\r")
        term.shows(b"Typed at once, answered.", "the answer")
    (request,) = server.requests
    assert request.body["messages"][-1]["content"] == "typed at once"


@pytest.mark.e2e
def test_settings_that_cannot_be_loaded_end_the_app_with_their_error(
    tmp_path: Path, isolated_env: Path
) -> None:
    settings = isolated_env / "config" / "co-tui" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "nord", "max_request_limit": "many"}')
    with on_a_pty(CLI, tmp_path, env_for("http://127.0.0.1:9")) as term:
        term.type(b"lost words")
        wait_for(term.ended, "the app to end")
        screen = term.drain()
    assert term.proc.returncode == 2
    said = screen[screen.rindex(LEAVE_ALTERNATE_SCREEN) :].decode(errors="replace")
    assert f"co-tui: settings error: {settings}" in said
    assert "max_request_limit" in said
