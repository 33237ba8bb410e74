"""A snapshot of the span viewer with fixed spans: table, trace tree and details."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from co_tui.tui.screens.spans import SpanScreen
from tests.telemetry.spandata import BASE_NS, turn_trace, write
from tests.telemetry.test_viewer import ChatStandIn, until


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_span_screen(snap_compare: Any, tmp_path: Path, utc: None) -> None:
    db = tmp_path / "co-tui.db"
    write(db, turn_trace(1) + turn_trace(2, base_ns=BASE_NS + 7_000_000_000, tool_error=True))
    screen = SpanScreen(db, poll_interval=None)

    async def run_before(pilot: Any) -> None:
        await until(pilot, lambda: screen.table.row_count == 16)
        await pilot.press("down", "down")  # the failed tool call of the newest turn
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.trace_tree.root.children))
        await pilot.pause(0.2)

    assert snap_compare(ChatStandIn(screen), terminal_size=(120, 36), run_before=run_before)
