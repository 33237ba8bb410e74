"""The app as `co-tui` starts it: the settings are loaded once the first frame is drawn (in a
thread: what is typed meanwhile shows at once, and what is sent waits for them), and
then apply in full: the theme, the thinking view, the model, and the prompt history, which is
read only once the configured secrets are known (so an older file holding one is cleaned).
The first frame is drawn in the theme the settings chose last time."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from co_tui.config.paths import user_data_dir
from co_tui.config.settings import SettingsError
from co_tui.config.trust import LoadedSettings
from co_tui.entry import load_settings_here
from co_tui.tui.app import CoApp
from co_tui.tui.terminal.theme_memory import THEME_FILE, remember_theme, remembered_theme
from tests.servers.fake_openai import serve, text
from tests.tui.helpers import SIZE, wait_until

SECRET = "correct-horse-battery-staple-42"  # no known credential shape: only configured


def configure(monkeypatch: pytest.MonkeyPatch, url: str, cwd: Path) -> None:
    """co-tui's settings from the environment, as a user sets them; `cwd` the project."""
    for name, value in {
        "LLM_PROVIDER": "openai",
        "OPENAI_BASE_URL": f"{url}/v1",
        "OPENAI_API_KEY": SECRET,
        "CO_TUI_OPENAI_MODEL": "fake",
        "CO_TUI_SANDBOX_BACKEND": "subprocess",
        "CO_TUI_THEME": "nord",
        "CO_TUI_VERBOSE": "true",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(cwd)


async def test_settings_loaded_after_the_first_frame_apply_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = user_data_dir() / "history"
    history.parent.mkdir(parents=True)
    history.write_text(json.dumps(f"my key is {SECRET}") + "\n" + json.dumps("ls") + "\n")
    with serve(default=text("ok")) as server:
        configure(monkeypatch, server.url, tmp_path)
        app = CoApp(load_settings_here)
        assert app.made_session is None
        async with app.run_test(size=SIZE):
            assert await app.wait_ready()
            assert app.theme == "nord"
            assert app.chat.sidebar.show_thinking
            assert app.chat.status.model == "openai:fake"
            assert app.prompt_history.entries == ["my key is [REDACTED]", "ls"]
        await app.session.aclose()
    assert SECRET not in history.read_text()


@pytest.mark.slow
@pytest.mark.usefixtures("allow_model_requests")
async def test_what_is_typed_while_the_settings_load_shows_at_once_and_is_sent_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def slow_settings() -> LoadedSettings:
        if not release.wait(timeout=30):
            raise AssertionError("the test never let the settings load")
        return load_settings_here()

    with serve(default=text("Sent before the settings, answered.")) as server:
        configure(monkeypatch, server.url, tmp_path)
        app = CoApp(slow_settings)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"hello")
            await wait_until(pilot, lambda: app.chat.prompt.text == "hello", "the typed words")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.chat.busy, "the message to be sent")
            assert app.made_session is None  # still loading: the keys did not wait for it
            release.set()
            await wait_until(pilot, lambda: len(server.requests) == 1, "the request")
            assert await app.wait_ready()
            await wait_until(pilot, lambda: not app.busy, "the answer")
        await app.session.aclose()
    assert server.requests[0].body["messages"][-1]["content"] == "hello"


async def first_frame_theme() -> str:
    """The theme of an app's first frame. Its settings wait until the theme is read, then
    cannot be loaded: the app ends without them (and remembers no theme)."""
    theme_read = threading.Event()

    def settings_once_the_theme_is_read() -> LoadedSettings:
        if not theme_read.wait(timeout=30):
            raise AssertionError("the test never read the theme")
        raise SettingsError("not loaded: the test looks at the first frame only")

    app = CoApp(settings_once_the_theme_is_read)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        theme = app.theme
        theme_read.set()
        await wait_until(pilot, lambda: app.settings_error is not None, "the app to end")
    assert app.made_session is None
    return theme


async def loaded_theme() -> str:
    """The theme of an app once its settings are loaded."""
    app = CoApp(load_settings_here)
    async with app.run_test(size=SIZE):
        assert await app.wait_ready()
        theme = app.theme
    await app.session.aclose()
    return theme


@pytest.mark.slow
async def test_the_first_frame_is_drawn_in_the_theme_chosen_last_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(default=text("ok")) as server:
        configure(monkeypatch, server.url, tmp_path)
        assert await first_frame_theme() == "textual-dark"
        assert await loaded_theme() == "nord"
        assert await first_frame_theme() == "nord"
        monkeypatch.setenv("CO_TUI_THEME", "gruvbox")  # the settings changed since
        assert await loaded_theme() == "gruvbox"
    assert await first_frame_theme() == "gruvbox"


def test_a_kept_theme_is_only_ever_a_short_name_in_a_regular_file(tmp_path: Path) -> None:
    """The data folder is the user's, but a start must not hang or take a link's word."""
    kept = tmp_path / THEME_FILE
    remember_theme(tmp_path, "nord")
    assert remembered_theme(tmp_path) == "nord"
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("nord\n")
    for hostile in (
        lambda: kept.symlink_to(elsewhere),  # a link, even to a good name
        lambda: kept.symlink_to("/dev/zero"),  # endless
        lambda: os.mkfifo(kept),  # a pipe no one writes to: open must not wait
        lambda: kept.write_bytes(b"nord" * 100),  # too long for a name
        lambda: kept.write_bytes(b"\x1b]0;pwned\x07nord"),  # escape codes
        lambda: kept.write_bytes(b"\xff\xfe"),  # not text
        lambda: kept.mkdir(),
    ):
        if kept.is_dir() and not kept.is_symlink():
            kept.rmdir()
        else:
            kept.unlink(missing_ok=True)
        hostile()
        assert remembered_theme(tmp_path) is None
