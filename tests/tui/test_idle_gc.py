"""Full garbage collections wait until the app is idle, and the setting is undone on exit."""

from __future__ import annotations

import gc
from pathlib import Path

from co_tui.tui import idle_gc
from tests.tui.helpers import SIZE, make_app, settle, text_stream


async def test_full_collection_runs_after_a_turn_not_during_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(idle_gc, "IDLE_S", 0.05)
    before = gc.get_threshold()
    app = make_app(text_stream("answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert gc.get_threshold()[2] == idle_gc.NEVER
        frozen = gc.get_freeze_count()
        app.chat.prompt.text = "hi"
        await pilot.press("enter")
        await settle(pilot, app)
        for _ in range(20):
            await pilot.pause(0.05)
            if gc.get_freeze_count() > frozen:
                break
        assert gc.get_freeze_count() > frozen  # the idle collection ran and froze survivors
    assert gc.get_threshold() == before
