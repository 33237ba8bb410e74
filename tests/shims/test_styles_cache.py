"""Textual's colour cache no longer keeps widgets' painted lines
(co_tui/shims/textual_styles_cache.py), and the styles are the ones Textual computes; the
shim is still needed: Textual's own `get_inner_outer` still keeps every widget's cache it
was called with."""

from __future__ import annotations

import gc
import weakref

from textual._styles_cache import StylesCache
from textual.app import App, ComposeResult
from textual.color import Color
from textual.widgets import Static

from co_tui.shims.textual_styles_cache import (
    TEXTUAL_GET_INNER_OUTER,
    get_inner_outer,
    inner_outer,
)

BASE, BACKGROUND = Color(10, 20, 30), Color(200, 100, 50, 0.5)


def test_textual_still_keeps_every_styles_cache_it_was_asked_with() -> None:
    # When this fails, Textual's method no longer holds its caches: delete
    # co_tui/shims/textual_styles_cache.py, its install in co_tui/shims/__init__.py and this
    # file (https://github.com/Textualize/textual/issues/6665).
    cache = StylesCache()
    TEXTUAL_GET_INNER_OUTER(cache, BASE, BACKGROUND)
    kept = weakref.ref(cache)
    del cache
    gc.collect()
    assert kept() is not None


def test_the_shim_gives_textuals_styles_and_keeps_no_cache() -> None:
    cache = StylesCache()
    assert get_inner_outer(cache, BASE, BACKGROUND) == TEXTUAL_GET_INNER_OUTER(
        StylesCache(), BASE, BACKGROUND
    )
    freed = weakref.ref(cache)
    del cache
    gc.collect()
    assert freed() is None


class CardsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("a card with a background", id="card")


async def test_painting_asks_the_shim_not_textuals_cache() -> None:
    """What Textual paints goes through the shim: its own cache (which would keep the
    widget's styles cache and every line it painted) gets no entry."""
    textuals_before = TEXTUAL_GET_INNER_OUTER.cache_info().currsize
    asked_before = inner_outer.cache_info()
    app = CardsApp()
    async with app.run_test(size=(40, 5)) as pilot:
        await pilot.pause()
        card = app.query_one("#card", Static)
        assert card.render_lines(card.region.reset_offset)
    asked = inner_outer.cache_info()
    assert asked.hits + asked.misses > asked_before.hits + asked_before.misses
    assert TEXTUAL_GET_INNER_OUTER.cache_info().currsize == textuals_before
