"""Start and exit as a user meets them: Ctrl+D and Ctrl+C around a draft, the welcome."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult

from co_tui.config.paths import user_data_dir
from co_tui.config.settings import Settings
from co_tui.session.status import SessionStatus
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from co_tui.tui.launch import resume_hint
from co_tui.tui.screens.confirm import ConfirmScreen
from co_tui.tui.screens.sessions import SessionsScreen
from co_tui.tui.widgets.prompt import PromptInput
from co_tui.tui.widgets.welcome import MARKER_NAME, Welcome
from tests.helpers import run_python
from tests.tui.helpers import SIZE, make_app, rendered, settle, text_stream, wait_until


async def submit(pilot: Any, app: Any, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")


async def test_ctrl_d_with_a_draft_deletes_forward_and_does_not_quit(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await pilot.press(*"draft", "home")
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert app.is_running
        assert prompt.text == "raft"
        prompt.clear()
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_on_a_draft_clears_it_but_up_brings_it_back(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await pilot.press(*"a long draft")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert prompt.text == ""
        assert app.is_running
        assert any("Up brings it back" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+c")  # the empty prompt: arms exit, as before
        await pilot.pause()
        assert app.is_running
        await pilot.press("up")
        assert prompt.text == "a long draft"
        await pilot.press("ctrl+c", "ctrl+c")  # a draft again: the second press does not exit
        await pilot.pause()
        assert app.is_running


async def test_first_launch_welcomes_then_later_launches_show_one_line(tmp_path: Path) -> None:
    app = make_app(text_stream("an answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        welcome = app.chat.welcome
        await wait_until(pilot, lambda: "fn" in rendered(welcome), "the model in the welcome")
        shown = rendered(welcome)
        assert "Welcome to co-tui" in shown and "Try one:" in shown
        assert "/setup adds Gemini, an OpenAI-compatible server or Ollama" in shown
        assert "GEMINI_API_KEY" not in shown  # no environment variables to learn
        assert app.chat.transcript.items == []  # the welcome is no transcript item
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        assert not welcome.display  # the conversation has begun
    marker = user_data_dir() / MARKER_NAME
    assert marker.stat().st_mode & 0o777 == 0o600

    later = make_app(text_stream("x"), tmp_path)
    async with later.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "fn" in rendered(later.chat.welcome), "the model")
        line = rendered(later.chat.welcome).strip()
        assert "\n" not in line and "Welcome" not in line
        assert line.startswith("co-tui · fn · sandbox:") and line.endswith("/help for commands")


async def test_with_only_the_embedded_model_the_welcome_offers_setup() -> None:
    """No provider set up: the embedded model answers, and /setup is how to add another."""

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            welcome = Welcome(first=True)
            welcome.status = SessionStatus(model="local:SmolLM2-360M-Instruct", local_model=True)
            yield welcome

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        welcome = app.query_one(Welcome)
        shown = " ".join(rendered(welcome).replace("│", " ").split())
        assert "The embedded local model answers, offline." in shown
        assert (
            "/setup to use Gemini, an OpenAI-compatible server, Ollama or a larger local model."
            in shown
        )
        assert "GEMINI_API_KEY" not in shown and "Another model?" not in shown
        assert welcome.outer_size.height <= 24 - 8  # room left for the prompt and status
        # only examples the embedded model handles: none that reads files or drafts mail
        assert "Why is the sea salty?" in shown
        assert "Summarise the README" not in shown and "Draft a short" not in shown


async def test_after_exit_a_session_with_turns_names_how_to_come_back(tmp_path: Path) -> None:
    app = make_app(text_stream("an answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert resume_hint(app.session) is None  # nothing said yet: nothing to come back to
        await submit(pilot, app, "hello")
        await settle(pilot, app)
    line = resume_hint(app.session)
    assert line == "co-tui: to come back to this session (1 turn): co-tui --resume 11111111"
    await app.session.aclose()


QUIT_BEFORE_THE_SESSION_LOADED = """
import sys
from co_tui.config.settings import Settings
from co_tui.session.status import SessionStatus
from co_tui.session.chat import ChatSession
from co_tui.tui.launch import resume_hint
print(resume_hint(ChatSession(Settings(), record=False)))
print("model libraries loaded:", "pydantic_ai" in sys.modules)
"""


def test_quitting_before_the_session_loaded_does_not_load_the_model_libraries(
    tmp_path: Path,
) -> None:
    """The exit path of a co-tui closed at once: pydantic-ai is ~0.4 s of imports to say
    nothing (measured: quit right after the first frame took 0.71 s, now 0.35 s)."""
    env = {**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    lines = run_python(QUIT_BEFORE_THE_SESSION_LOADED, env=env, cwd=tmp_path)
    assert lines == ["None", "model libraries loaded: False"]


@pytest.mark.slow
async def test_deleting_the_open_session_starts_a_new_one_and_sticks(tmp_path: Path) -> None:
    app = make_app(text_stream("an answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "a secret plan")
        await settle(pilot, app)
        deleted = app.session.session_id
        app.run_command("/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), "the list")
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await wait_until(pilot, lambda: screen.table.row_count == 1, "one row")
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        assert "open now" in rendered(app.screen.query_one("#confirm-details"))
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.table.row_count == 0, "the row gone")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.session.session_id != deleted, "a new session")
        await settle(pilot, app)
        assert not app.chat.transcript.items[:-1]  # only the note saying so
        assert "Deleted the session that was open" in rendered(app.chat.transcript)
        await submit(pilot, app, "a fresh start")
        await settle(pilot, app)
    store = SessionStore()
    try:
        assert [i.title for i in store.list()] == ["a fresh start"]
    finally:
        store.close()


async def test_telemetry_that_cannot_store_says_so_once_in_the_transcript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file where the data folder should be: the app opens and answers; the transcript says
    in one line that no spans are kept (no Python warning on the terminal behind the app)."""
    data = tmp_path / "data-file"
    data.write_text("not a folder")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.chdir(tmp_path)
    settings = Settings(model="test", theme="textual-dark", sandbox_backend="subprocess")
    app = CoApp(settings, history_path=None)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot, lambda: "telemetry is off" in rendered(app.chat.transcript), "the notice"
        )
        shown = " ".join(rendered(app.chat.transcript).split())
        assert shown.count("telemetry is off") == 1
        assert f"cannot use {data}/co-tui: Not a directory" in shown
    assert data.read_text() == "not a folder"
