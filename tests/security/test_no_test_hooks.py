"""co-tui takes no test hooks from its environment. `co-tui serve`'s app once imported and
called any `module:function` named in CO_TUI_TEST_MODEL_FACTORY (code of the environment's
choosing, in the process that holds the user's keys), and the app wrote a file named in
CO_TUI_EXIT_AFTER_FIRST_FRAME and quit at its first frame. Each is set here to what it once
obeyed: the app carries on as configured, and nothing it named is run or written."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from co_tui.serve.server import app_command
from tests.conftest import ROOT
from tests.helpers import wait_for
from tests.servers.fake_openai import FakeOpenAIServer, serve, text
from tests.test_peers_pty import on_a_pty
from tests.test_signals import CLI, env_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")

HOOK_RAN = "test-hook-ran.txt"
HOOK = "tests.security.test_no_test_hooks:leave_a_file"
ANSWER = b"ANSWERED-BY-THE-CONFIGURED-SERVER"
PROMPT = b"who answers"
FIRST_FRAME = b"Ask anything"  # the prompt's placeholder
LOADED = b"subprocess"  # the sandbox, in the status bar once the settings are loaded
CTRL_Q = b"\x11"
SHOWN_WITHIN_S = 60.0


def leave_a_file() -> None:
    """What the served app's environment names: a file in its working directory, and no
    model (an app that called it would carry on with the configured one)."""
    Path(HOOK_RAN).write_text("the app ran code named in its environment\n")


class ServedApp:
    """One browser session's app, started as `co-tui serve` starts it (textual-serve's
    AppService running `app_command`); what it draws is kept, keys are sent as typed."""

    def __init__(self) -> None:
        self.drawn = bytearray()
        self.service = AppService(
            app_command(None),
            write_bytes=self._draw,
            write_str=self._ignore,
            close=self._ignore,
            download_manager=DownloadManager(),
        )

    async def _draw(self, data: bytes) -> None:
        self.drawn.extend(data)

    async def _ignore(self, *args: object) -> None:
        pass

    async def shows(self, needle: bytes, what: str) -> None:
        deadline = time.monotonic() + SHOWN_WITHIN_S
        while needle not in self.drawn:
            if time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting for {what}:\n{self.drawn[-2000:]!r}")
            await asyncio.sleep(0.05)

    async def start(self) -> None:
        await self.service.start(100, 30)  # a 100x30 browser window

    async def type(self, keys: bytes) -> None:
        await self.service.send_bytes(keys)

    async def quit(self) -> None:
        """As when the browser goes: the app is told to quit; then its exit is waited for
        (textual-serve never waits, its event loop outlives the app)."""
        await self.service.stop()
        if self.service._process is not None:
            await self.service._process.wait()


@pytest.fixture
def model_server() -> Iterator[FakeOpenAIServer]:
    with serve(default=text(ANSWER.decode())) as server:
        yield server


@pytest.fixture
def workspace(
    tmp_path: Path,
    isolated_env: Path,
    model_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """The served app's working directory, and its environment: co-tui configured for
    `model_server` as a user configures it, and CO_TUI_TEST_MODEL_FACTORY naming
    `leave_a_file` (which the app could import: tests/ is on its path)."""
    python_path = [p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p]
    environment = env_for(
        model_server.url, CO_TUI_TEST_MODEL_FACTORY=HOOK, PYTHONPATH=os.pathsep.join(python_path)
    )
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
async def test_the_served_app_runs_no_code_named_in_its_environment(
    workspace: Path, model_server: FakeOpenAIServer
) -> None:
    app = ServedApp()
    await app.start()
    try:
        await app.shows(FIRST_FRAME, "the first frame")
        await app.type(PROMPT)
        await app.shows(PROMPT, "the typed prompt")
        await app.type(b"\r")
        await app.shows(ANSWER, "the configured server's answer")
    finally:
        await app.quit()
    assert not (workspace / HOOK_RAN).exists(), "the app ran the function its environment named"
    (request,) = model_server.requests  # the model is the configured one
    assert request.body["messages"][-1]["content"] == PROMPT.decode()


@pytest.mark.e2e
def test_the_app_neither_writes_nor_quits_at_its_first_frame_when_told_to(
    tmp_path: Path, isolated_env: Path
) -> None:
    told_to_write = tmp_path / "first-frame.txt"
    env = env_for("http://127.0.0.1:9", CO_TUI_EXIT_AFTER_FIRST_FRAME=str(told_to_write))
    with on_a_pty(CLI, tmp_path, env) as term:
        wait_for(lambda: term.ended() or LOADED in term.drain(), "the app to load (or quit)")
        assert not told_to_write.exists(), "the app wrote the file its environment named"
        assert not term.ended(), "the app quit at its first frame, as its environment said"
        assert FIRST_FRAME in term.drain()
        term.type(CTRL_Q)
        wait_for(term.ended, "the app to quit")
    assert term.proc.returncode == 0
