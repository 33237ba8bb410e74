"""Pilot tests for the everyday features peers have: terminal notifications, Ctrl+G ($EDITOR
on the prompt), the @ picker and attachments."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.drivers.headless_driver import HeadlessDriver

from co_tui.config.settings import Settings
from co_tui.safety.visible import safe_line
from co_tui.tui.terminal.notify import notification_sequence
from co_tui.tui.widgets.items import Note
from tests.helpers import user_prompts
from tests.tui.helpers import (
    SIZE,
    approval_dialog,
    make_app,
    picker_settled,
    settle,
    shell_then_text,
    text_stream,
    wait_until,
)

ESC = "\x1b"


def record_terminal(app: Any) -> list[str]:
    """What the app writes to the terminal (Textual's headless driver drops it)."""
    written: list[str] = []
    app._driver.write = written.append
    return written


def notifications(written: list[str]) -> list[str]:
    return [w for w in written if w.startswith(f"{ESC}]9;")]


async def blur_and_send(pilot: Any, app: Any, text: str) -> None:
    """The terminal loses the focus, then `text` is sent (no key press: a key refocuses)."""
    app.post_message(events.AppBlur())
    await wait_until(pilot, lambda: not app.app_focus, "the app to see the focus go")
    app.chat.prompt.text = text
    app.chat.prompt.action_submit()


def test_the_sequence_is_osc9_osc777_and_the_bell() -> None:
    assert notification_sequence("the answer is ready") == (
        f"{ESC}]9;co-tui: the answer is ready\a{ESC}]777;notify;co-tui;the answer is ready\a\a"
    )


def test_text_from_the_model_cannot_carry_a_sequence() -> None:
    hostile = f"rm x\a{ESC}]52;c;ZXZpbA==\a\nnext; line"
    line = safe_line(hostile)
    assert ESC not in line and "\a" not in line and "\n" not in line and ";" not in line
    assert line == "rm x\\x07\\x1b]52,c,ZXZpbA==\\x07 next, line"
    assert len(safe_line("x" * 500)) == 160


@pytest.mark.slow
async def test_an_approval_waiting_while_unfocused_notifies(tmp_path: Path) -> None:
    app = make_app(shell_then_text([f"echo {ESC}[2J hi"]), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        written = record_terminal(app)
        await blur_and_send(pilot, app, "run it")
        await approval_dialog(pilot, app)
        await wait_until(pilot, lambda: notifications(written), "a notification")
        (sent,) = notifications(written)
        assert "run_shell_command waits for your decision: echo \\x1b[2J hi" in sent
        assert sent.count(ESC) == 2 and sent.endswith("\a\a")
        await pilot.press("n")
        await settle(pilot, app)


@pytest.mark.slow
async def test_nothing_is_sent_while_focused_or_when_turned_off(tmp_path: Path) -> None:
    for settings, blur in ((Settings(), False), (Settings(notifications=False), True)):
        app = make_app(shell_then_text(["echo hi"]), tmp_path, settings=settings)
        async with app.run_test(size=SIZE) as pilot:
            written = record_terminal(app)
            if blur:
                await blur_and_send(pilot, app, "run it")
            else:
                app.chat.prompt.text = "run it"
                app.chat.prompt.action_submit()
            await approval_dialog(pilot, app)
            await pilot.press("n")
            await settle(pilot, app)
            assert notifications(written) == []


async def test_a_long_turn_ending_unfocused_notifies_and_a_short_one_does_not(
    tmp_path: Path,
) -> None:
    for after_s, expected in ((0.0, 1), (3600.0, 0)):
        settings = Settings(notify_after_s=after_s)
        app = make_app(text_stream("done"), tmp_path, settings=settings)
        async with app.run_test(size=SIZE) as pilot:
            written = record_terminal(app)
            await blur_and_send(pilot, app, "hi")
            await settle(pilot, app)
            await pilot.pause()
            sent = notifications(written)
            assert len(sent) == expected
            if expected:
                # the turn's length in whole seconds: 0 on a quiet machine, more on a busy one
                assert re.search(r"co-tui: the answer is ready \(after \d+ s\)", sent[0])


# -- Ctrl+G: the prompt in $EDITOR --


def editor_script(folder: Path, body: str) -> Path:
    """An editor: a shell script run as `script FILE`; it logs the file's mode and name."""
    script = folder / "editor.sh"
    log = folder / "editor.log"
    script.write_text(f'#!/bin/sh\nstat -c "%a $1" "$1" > "{log}"\n{body}\n', encoding="utf-8")
    script.chmod(0o755)
    return script


def toasts(app: Any) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


async def ctrl_g(pilot: Any, app: Any, draft: str) -> None:
    app.chat.prompt.text = draft
    await pilot.press("ctrl+g")
    await pilot.pause()


@pytest.fixture
def suspendable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Textual's headless driver cannot suspend; the pty test (tests/test_peers_pty.py)
    runs a real terminal. Here the headless one lets App.suspend run."""
    monkeypatch.setattr(HeadlessDriver, "can_suspend", property(lambda self: True))
    monkeypatch.delenv("VISUAL", raising=False)


@pytest.mark.usefixtures("suspendable")
async def test_ctrl_g_replaces_the_draft_with_what_the_editor_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = editor_script(tmp_path, 'printf "added by the editor\\n" >> "$1"')
    monkeypatch.setenv("EDITOR", str(script))
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ctrl_g(pilot, app, "first line\nsecond")
        assert app.chat.prompt.text == "first line\nsecond\nadded by the editor"
    mode, name = (tmp_path / "editor.log").read_text().split()
    assert mode == "600"
    assert not Path(name).exists()


@pytest.mark.usefixtures("suspendable")
async def test_a_failing_or_missing_editor_leaves_the_draft(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = editor_script(tmp_path, 'echo changed > "$1"; exit 3')
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        monkeypatch.setenv("EDITOR", str(script))
        await ctrl_g(pilot, app, "my draft")
        assert app.chat.prompt.text == "my draft"
        assert "exited with status 3; the draft is unchanged" in toasts(app)
        monkeypatch.setenv("EDITOR", str(tmp_path / "no-such-editor"))
        await ctrl_g(pilot, app, "my draft")
        assert app.chat.prompt.text == "my draft"
        assert "editor not found:" in toasts(app)
    _, name = (tmp_path / "editor.log").read_text().split()
    assert not Path(name).exists()


async def test_ctrl_z_without_a_shell_keeps_the_draft_and_ctrl_underscore_undoes(
    tmp_path: Path,
) -> None:
    """Ctrl+Z suspends to the shell (tests/test_suspend_pty.py); with no terminal to give
    back it says why and the prompt keeps its text. Undo moved to Ctrl+_."""
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await pilot.press(*"draft", "space", *"more")
        await pilot.press("ctrl+z")
        await wait_until(pilot, lambda: "Ctrl+Z: " in toasts(app), "the note on Ctrl+Z")
        assert app.chat.prompt.text == "draft more"
        await pilot.press("ctrl+underscore")  # the typing is one undo step here
        assert app.chat.prompt.text != "draft more"
        await pilot.press("ctrl+y")
        assert app.chat.prompt.text == "draft more"


# -- the @ picker and attachments --


def mention_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for name in ("src/app.py", "src/apple_pie.md", "docs/api.md", "tests/test_app.py"):
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(f"contents of {name}\n", encoding="utf-8")
    return ws


def shown(app: Any) -> list[str]:
    picker = app.chat.picker
    return [str(picker.get_option_at_index(i).prompt) for i in range(picker.option_count)]


@pytest.mark.slow
async def test_at_opens_a_fuzzy_picker_and_enter_inserts_the_path(tmp_path: Path) -> None:
    ws = mention_workspace(tmp_path)
    app = make_app(text_stream("ok"), ws)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await pilot.press(*"explain @sapp")
        picker = app.chat.picker
        await picker_settled(pilot, app)
        assert shown(app)[0] == "src/app.py"
        assert "docs/api.md" not in shown(app)
        await pilot.press("down", "up", "enter")
        assert app.chat.prompt.text == "explain @src/app.py "
        assert not picker.open
        await pilot.press(*"please", "enter")
        await settle(pilot, app)
        notes = [str(w._source) for w in app.chat.transcript.items if isinstance(w, Note)]
        assert "· attached src/app.py (1 line)" in notes
    sent = user_prompts(app.session.history)[0]
    assert sent.startswith("explain @src/app.py please\n\nattached file: src/app.py (1 line)")


@pytest.mark.slow
async def test_esc_closes_the_picker_and_an_email_opens_none(tmp_path: Path) -> None:
    ws = mention_workspace(tmp_path)
    app = make_app(text_stream("ok"), ws)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await pilot.press(*"@doc")
        picker = app.chat.picker
        await wait_until(pilot, lambda: picker.open, "the @ picker to open")
        await pilot.press("escape")
        assert not picker.open
        await pilot.press("s")  # still the same word: it stays closed
        await pilot.pause()
        assert not picker.open and app.chat.prompt.text == "@docs"
        app.chat.prompt.clear()
        await pilot.press(*"mail a@b")
        await pilot.pause(0.2)
        assert not picker.open


async def test_copying_in_the_prompt_says_how_it_was_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        written = record_terminal(app)
        app.chat.prompt.text = "copy me"
        app.chat.prompt.select_all()
        await pilot.press("ctrl+c")
        told = "Copied via OSC 52 (your terminal must allow it)"
        await wait_until(pilot, lambda: told in toasts(app), "the toast saying how it was copied")
        assert any(w.startswith(f"{ESC}]52;c;") for w in written)
