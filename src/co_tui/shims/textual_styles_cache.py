"""A widget's rendered lines go with the widget (a shim for an upstream leak).

Textual 8's `StylesCache.get_inner_outer` is a method under `functools.lru_cache(1024)`
without `classmethod`: its cache key holds the `StylesCache` itself, one per widget, and
so keeps up to 1,024 of them alive with every line each one painted (a Strip and its seven
caches a line). The transcript mounts and lets go of two widgets a turn: from turn 60 to
turn 180 the app gained 9,231 live Strips, most of them of widgets long gone.

The shim caches the two styles by the two colours alone, as the method means to.

install_shims() (co_tui/shims/__init__.py) installs it once textual._styles_cache is
imported. tests/shims/test_styles_cache.py checks that painting goes through the shim and
that it keeps no cache, and fails once Textual's own method no longer keeps one, to say the
shim can go.

Upstream: https://github.com/Textualize/textual/issues/6665 (open).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from textual._styles_cache import StylesCache
from textual.color import Color
from textual.style import Style

TEXTUAL_GET_INNER_OUTER = StylesCache.__dict__["get_inner_outer"]  # Textual's own


@lru_cache(1024)
def inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    """The inner and outer background styles, as Textual's method computes them."""
    return (
        Style(background=base_background + background),
        Style(background=base_background),
    )


def get_inner_outer(
    self: StylesCache, base_background: Color, background: Color
) -> tuple[Style, Style]:
    return inner_outer(base_background, background)


def install_colour_keyed_inner_outer() -> None:
    """From now on the cache holds colours, not widgets' caches. Idempotent."""
    styles_cache: Any = StylesCache
    styles_cache.get_inner_outer = get_inner_outer
