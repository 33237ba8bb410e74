"""Pilot tests for the everyday features peers have: terminal notifications, Ctrl+G ($EDITOR
on the prompt), the @ picker and attachments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import events

from co_tui.config import Settings
from co_tui.tui.notify import notification_sequence, safe_line
from tests.tui.helpers import (
    SIZE,
    approval_dialog,
    make_app,
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
                assert "co-tui: the answer is ready (after 0 s)" in sent[0]
