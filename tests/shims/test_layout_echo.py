"""A widget that changes size costs one layout pass, not two
(co_tui/shims/textual_layout_echo.py), and the screen shows the same; the shim is still
needed: Textual still asks for the second pass."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from co_tui.shims.textual_layout_echo import TEXTUAL_SIZE_UPDATED, size_updated_once
from tests.tui.test_relayout_pilot import LayoutPasses, shown_text


class GrowingApp(App[None]):
    """A transcript-like scroll, anchored at its end, whose last item grows."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="scroll"):
            for n in range(30):
                yield Static(f"item {n}")
            yield Static("line 1", id="growing")

    def on_mount(self) -> None:
        self.query_one("#scroll", VerticalScroll).anchor()


async def passes_to_grow(
    monkeypatch: pytest.MonkeyPatch, size_updated: object
) -> tuple[int, list[str], float, float]:
    """(layout passes, what the screen shows) as the last item grows by two lines."""
    monkeypatch.setattr(Widget, "_size_updated", size_updated)
    app = GrowingApp()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        passes = LayoutPasses(app.screen)
        app.query_one("#growing", Static).update("line 1\nline 2\nline 3")
        for _ in range(5):
            await pilot.pause()
        scroll = app.query_one("#scroll", VerticalScroll)
        return passes.count, shown_text(scroll), scroll.scroll_y, scroll.max_scroll_y


async def test_textual_still_lays_out_twice_for_one_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # When this fails, Textual no longer asks for a layout pass after each one that resized
    # a widget: delete co_tui/shims/textual_layout_echo.py and its install in
    # co_tui/shims/__init__.py.
    count, *_ = await passes_to_grow(monkeypatch, TEXTUAL_SIZE_UPDATED)
    assert count == 2


async def test_one_pass_shows_what_two_did(monkeypatch: pytest.MonkeyPatch) -> None:
    two = await passes_to_grow(monkeypatch, TEXTUAL_SIZE_UPDATED)
    one = await passes_to_grow(monkeypatch, size_updated_once)
    assert one[0] == 1
    assert one[1:] == two[1:]
    shown, scroll_y, max_scroll_y = one[1:]
    assert shown[-3:] == ["line 1", "line 2", "line 3"]  # still following the end
    assert scroll_y == max_scroll_y
