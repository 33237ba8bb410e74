"""/setup: a provider set up from inside the app. Enter tests the connection by listing the
server's models through the real HTTP client; it works: the key is saved 0600 in the user's
credentials file (never the project) and the session switches to the provider. A refused key,
a closed port, Escape or a link at the file's path: one line says why and nothing is saved."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input, OptionList, Static

from co_tui.config.paths import user_credentials_path
from co_tui.tui.app import CoApp
from co_tui.tui.screens.model_picker import ModelPickerScreen
from co_tui.tui.screens.setup import SetupScreen
from tests.servers.fake_openai import FakeOpenAIServer, text
from tests.servers.loopback import LoopbackServer
from tests.tui.helpers import make_app, rendered, text_stream, wait_until

KEY = "sk-setup-0123456789"
CLOSED_PORT = "http://127.0.0.1:9/v1"  # discard: nothing listens there


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer(default=text("answered by the new provider"), models=("fake",))
    server.start()
    yield server
    server.stop()


def models_server(status: int, stall_s: float = 0.0) -> LoopbackServer:
    """GET /v1/models answered with `status` (after `stall_s`); the key is never accepted."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            time.sleep(stall_s)
            body = json.dumps({"object": "list", "data": [{"id": "fake"}]}).encode()
            if status != 200:
                body = json.dumps({"error": {"message": "Incorrect API key provided"}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return LoopbackServer(Handler, quiet=True).start()


async def open_setup(pilot: Any, app: CoApp) -> SetupScreen:
    app.chat.prompt.text = "/setup"
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup dialog")
    screen = app.screen
    assert isinstance(screen, SetupScreen)
    await pilot.pause()
    return screen


async def fill_openai(pilot: Any, screen: SetupScreen, url: str, key: str = KEY) -> None:
    await pilot.press("down")  # Gemini -> OpenAI-compatible
    await pilot.pause()
    assert screen.provider == "openai"
    screen.query_one("#setup-url", Input).value = url
    screen.query_one("#setup-key", Input).value = key


def status(screen: SetupScreen) -> str:
    return " ".join(rendered(screen.query_one("#setup-status", Static)).split())


@pytest.mark.usefixtures("allow_model_requests")
async def test_a_working_server_is_saved_privately_and_the_session_switches(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    app = make_app(text_stream("from the first model"), workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_setup(pilot, app)
        await fill_openai(pilot, screen, f"{openai_server.url}/v1")
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: app.session.model_label() == "openai:fake",
            "the switch to openai:fake",
        )
        assert not isinstance(app.screen, SetupScreen)
        app.chat.prompt.text = "hello"
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: "answered by the new provider" in rendered(app.chat.transcript),
            "the new provider's answer",
        )
    path = user_credentials_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    saved = json.loads(path.read_text())
    assert saved == {
        "llm_provider": "openai",
        "openai_api_key": KEY,
        "openai_base_url": f"{openai_server.url}/v1",
        "openai_model": "fake",
    }
    assert not any(workspace.iterdir())  # nothing written in the project
    assert openai_server.requests[-1].body["model"] == "fake"


@pytest.mark.parametrize(
    ("status_code", "why"),
    [(401, "answered 401: the server refused the key"), (500, "answered 500")],
)
async def test_a_refused_key_says_so_and_saves_nothing(
    tmp_path: Path, status_code: int, why: str
) -> None:
    server = models_server(status_code)
    try:
        app = make_app(text_stream("unused"), tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_setup(pilot, app)
            await fill_openai(pilot, screen, f"{server.url}/v1")
            await pilot.press("enter")
            await wait_until(pilot, lambda: "Not saved" in status(screen), "the failure")
            assert why in status(screen)
            assert KEY not in status(screen)
            assert app.screen is screen  # the values stay to be corrected
            assert screen.query_one("#setup-key", Input).value == KEY
            assert app.session.model_label() == "fn"
    finally:
        server.stop()
    assert not user_credentials_path().exists()


async def test_a_closed_port_names_the_host_and_saves_nothing(tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_setup(pilot, app)
        await fill_openai(pilot, screen, CLOSED_PORT)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Not saved" in status(screen), "the failure")
        assert "could not connect to 127.0.0.1:9" in status(screen)
    assert not user_credentials_path().exists()


async def test_bad_input_is_named_before_any_connection(tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_setup(pilot, app)
        await pilot.press("enter")  # Gemini without a key
        await pilot.pause()
        assert "Not saved: gemini needs a key" in status(screen)
        await fill_openai(pilot, screen, "not a url\x1b[2J", key="")
        await pilot.press("enter")
        await pilot.pause()
        assert "is not an http(s) URL" in status(screen)
        assert "\x1b" not in status(screen)
    assert not user_credentials_path().exists()


async def test_escape_during_the_test_cancels_it_and_saves_nothing(tmp_path: Path) -> None:
    server = models_server(200, stall_s=1.0)
    try:
        app = make_app(text_stream("unused"), tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_setup(pilot, app)
            await fill_openai(pilot, screen, f"{server.url}/v1")
            await pilot.press("enter")
            await wait_until(pilot, lambda: screen.testing, "the test to start")
            await pilot.press("escape")  # the screen answers keys while the server is asked
            await wait_until(pilot, lambda: app.screen is not screen, "the dialog closed")
            await pilot.pause(1.5)  # past the server's answer
            assert app.session.model_label() == "fn"
    finally:
        server.stop()
    assert not user_credentials_path().exists()


async def test_a_link_at_the_credentials_path_is_refused(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("{}\n")
    path = user_credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    app = make_app(text_stream("unused"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_setup(pilot, app)
        await fill_openai(pilot, screen, f"{openai_server.url}/v1")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Not saved" in status(screen), "the refusal")
        assert "symbolic link" in status(screen)
        assert app.session.model_label() == "fn"
    assert target.read_text() == "{}\n" and path.is_symlink()


async def test_the_model_picker_offers_to_add_a_provider(tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        app.chat.prompt.text = "/model"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPickerScreen), "the picker")
        picker = app.screen
        assert isinstance(picker, ModelPickerScreen)
        await wait_until(pilot, lambda: picker.listed is not None, "the model lists")
        options = picker.query_one("#model-options", OptionList)
        assert options.get_option_at_index(options.option_count - 1).id == "add-provider"
        options.highlighted = options.option_count - 1
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "the setup dialog")


def test_the_setup_dialog_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        pilot.app.chat.prompt.cursor_blink = False
        screen = await open_setup(pilot, pilot.app)
        await fill_openai(pilot, screen, "http://127.0.0.1:8080/v1")
        screen.query_one("#setup-url", Input).cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


@pytest.mark.usefixtures("allow_model_requests")
async def test_a_url_typed_and_enter_in_one_burst_is_what_is_tested(tmp_path: Path) -> None:
    """As a paste or a fast typist sends it: Enter right behind the URL's last character
    (it tested an empty field while Enter was a priority binding; found in tmux)."""
    app = make_app(text_stream("unused"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_setup(pilot, app)
        await pilot.press("down", "tab")
        for key in [*CLOSED_PORT, "enter"]:  # posted at once: no pause for the app between
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await wait_until(pilot, lambda: "Not saved" in status(screen), "the failure")
        assert "could not connect to 127.0.0.1:9" in status(screen)
    assert not user_credentials_path().exists()
