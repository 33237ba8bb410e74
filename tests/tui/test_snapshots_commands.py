"""Snapshots of slash commands: the whole of /help (argument hints kept), and a command
given an argument it cannot use (echoed, then its usage; nothing changed). Update with
`--snapshot-update` and look at every SVG in snapshots/test_snapshots_commands/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.helpers import make_app, submit_for_snapshot, text_stream


def test_help_in_full(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        await submit_for_snapshot(pilot, "/help")

    assert snap_compare(app, terminal_size=(120, 62), run_before=run_before)


def test_a_bad_argument_is_echoed_with_the_usage(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        await submit_for_snapshot(pilot, "/yolo maybe")
        pilot.app.chat.prompt.text = "/copy "
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
