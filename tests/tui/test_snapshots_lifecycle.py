"""Snapshots of start-up and stored sessions: the first launch's welcome, a later launch's one
line, the delete confirmation. Update with `--snapshot-update` and look at every SVG in
snapshots/test_snapshots_lifecycle/ before accepting."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from co_tui.config.paths import user_data_dir
from co_tui.tui.screens.confirm import ConfirmScreen
from co_tui.tui.screens.sessions import SessionsScreen
from co_tui.tui.widgets.welcome import remember_launch
from tests.tui.helpers import make_app, settle, text_stream, wait_until

SIZE = (100, 30)


async def _loaded(pilot: Any) -> None:
    pilot.app.chat.prompt.cursor_blink = False
    await wait_until(pilot, lambda: pilot.app.chat.status.model == "fn", "the model")
    await pilot.pause()


def test_first_launch_welcome(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=_loaded)


def test_first_launch_welcome_at_80x24(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_loaded)


def test_first_launch_welcome_on_the_embedded_model(snap_compare: Any, tmp_path: Path) -> None:
    """The examples are ones the embedded model handles, and /setup is offered."""
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        await _loaded(pilot)
        status = pilot.app.chat.status
        pilot.app.chat.status = replace(
            status, model="local:SmolLM2-135M-Instruct", local_model=True
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_later_launch_one_line(snap_compare: Any, tmp_path: Path) -> None:
    remember_launch(user_data_dir())
    app = make_app(text_stream("unused"), tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=_loaded)


@pytest.mark.slow
def test_delete_confirmation(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("Here is a plan for the week."), tmp_path)

    async def run_before(pilot: Any) -> None:
        await _loaded(pilot)
        pilot.app.chat.prompt.text = "Plan my week"
        await pilot.press("enter")
        await settle(pilot, pilot.app)
        pilot.app.run_command("/resume")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen), "list")
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.table.row_count == 1, "the session's row")
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), "question")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
