"""SIGTERM and SIGHUP in the running app: the turn is cancelled as by Ctrl+C (its command
killed, the turn saved), then the app exits with 128 + the signal's number. The signal is
really sent to this process: the app's handler is on the loop the pilot runs."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ToolCallPart, ToolReturnPart

from co_tui.config.settings import Settings
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from tests.helpers import processes_in
from tests.tui.helpers import SIZE, approval_dialog, make_app, shell_then_text, wait_until

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

SLOW_COMMAND = "echo started > started.txt; sleep 30; echo late > marker.txt"
STOPS = [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGHUP, id="SIGHUP")]


async def submit(pilot: Any, app: CoApp, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")


def send(signum: int) -> None:
    """Deliver `signum` to this process, once the app handles it (else it would end pytest)."""
    handler = signal.getsignal(signum)
    assert handler not in (signal.SIG_DFL, signal.SIG_IGN, None), "the app handles no signal"
    os.kill(os.getpid(), signum)


async def exited(app: CoApp, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while app.is_running:
        if time.monotonic() > deadline:
            raise AssertionError(f"the app still runs {timeout:g}s after the signal")
        await asyncio.sleep(0.02)


def stored_parts() -> list[Any]:
    store = SessionStore()
    try:
        (info,) = store.list()
        return [p for m in store.load(info.id).messages for p in m.parts]
    finally:
        store.close()


@pytest.mark.parametrize("signum", STOPS)
async def test_a_signal_cancels_the_running_command_saves_and_exits(
    tmp_path: Path, signum: int
) -> None:
    settings = Settings(theme="textual-dark", auto_confirm=True)
    app = make_app(shell_then_text([SLOW_COMMAND]), tmp_path, settings=settings)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, app, "run it")
            started = tmp_path / "started.txt"
            await wait_until(pilot, started.exists, "the command to start", timeout=30)
            assert any(cmd.startswith("sleep 30") for cmd in processes_in(tmp_path))
            send(signum)
            await exited(app)
    finally:
        await app.session.aclose()
    assert app.return_code == 128 + signum
    assert processes_in(tmp_path) == [] and not (tmp_path / "marker.txt").exists()
    parts = stored_parts()
    [call] = [p for p in parts if isinstance(p, ToolCallPart)]
    [answer] = [p for p in parts if isinstance(p, ToolReturnPart)]
    assert call.args_as_dict() == {"cmd": SLOW_COMMAND}
    assert answer.tool_call_id == call.tool_call_id  # answered: the session goes on
    assert answer.outcome == "interrupted"
    store = SessionStore()
    try:
        with sqlite3.connect(store.path) as db:
            assert db.execute("SELECT state FROM tool_runs").fetchall() == [("interrupted",)]
        db.close()
    finally:
        store.close()


async def test_sigterm_in_the_approval_dialog_runs_nothing(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch should-not-exist"]), tmp_path)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, app, "make a file")
            await approval_dialog(pilot, app, armed=False)
            send(signal.SIGTERM)
            await exited(app)
    finally:
        await app.session.aclose()
    assert app.return_code == 143
    assert not (tmp_path / "should-not-exist").exists()
    store = SessionStore()
    try:
        (info,) = store.list()
    finally:
        store.close()
    assert info.has_pending  # reopening the session asks again
