"""A tool call cut short (Esc while it runs) is drawn as interrupted, stored as interrupted,
and its journal row is closed: a reopened session never reports it as still running."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ToolReturnPart

from co_tui.config.settings import Settings
from co_tui.protocol import events as ev
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from co_tui.tui.widgets.tool_call import ToolCallBlock
from co_tui.turn.replay import replay
from tests.helpers import processes_in
from tests.tui.helpers import SIZE, make_app, settle, shell_then_text, wait_until

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

SLOW_COMMAND = "echo started > started.txt; sleep 30; echo late > marker.txt"


async def submit(pilot: Any, app: CoApp, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")


async def test_esc_on_a_running_command_shows_stores_and_closes_it_as_interrupted(
    tmp_path: Path,
) -> None:
    settings = Settings(theme="textual-dark", auto_confirm=True)
    app = make_app(shell_then_text([SLOW_COMMAND]), tmp_path, settings=settings)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, app, "run it")
            started = tmp_path / "started.txt"
            await wait_until(pilot, started.exists, "the command to start", timeout=30)
            await pilot.press("escape")
            await settle(pilot, app)
            [block] = app.query(ToolCallBlock)
            assert block.status == "interrupted"
            session_id = app.session.session_id
    finally:
        await app.session.aclose()
    assert processes_in(tmp_path) == []
    store = SessionStore()
    try:
        loaded = store.load(session_id)
        path = store.path
    finally:
        store.close()
    [answer] = [p for m in loaded.messages for p in m.parts if isinstance(p, ToolReturnPart)]
    # What the model is told on the next turn, and how a reopened transcript draws it.
    assert (answer.content, answer.outcome) == ("Interrupted by user.", "interrupted")
    [shown] = [e for e in replay(loaded.messages, session_id) if isinstance(e, ev.ToolResult)]
    assert shown.status == "interrupted"
    # Its journal row is closed: the reopened session reports nothing as still running.
    assert loaded.unfinished == [] and loaded.unfinished_notice() is None
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT state FROM tool_runs").fetchall() == [("interrupted",)]
