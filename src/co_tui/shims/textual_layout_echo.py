"""One layout pass for a widget that changed size, not two (a shim for an upstream cost).

In Textual 8 a full layout pass (`Screen._refresh_layout`) gives every widget its new size
with `Widget._size_updated(...)`, whose `layout` argument defaults to True: the widget's
`virtual_size` reactive is then set as declared, `layout=True`, so each widget whose size
changed asks for another full pass. That pass finds nothing to change, yet reflows every
widget on the screen again and repaints the ones that asked. A streamed answer grows at
most flushes, so each of them cost two passes: 89 for a 20,000-chunk answer where 47 do
(bench/p1_stream.py, in-process), each a reflow of the whole transcript.

The scroll-only path of the same method already passes `layout=False`; the shim makes the
full path do the same. Everything else `_size_updated` does still happens: the widget
marked dirty when its size changed, its scrollbars updated; what moved is repainted by the
compositor's dirty regions. What `layout=False` skips besides the second pass are watchers
of `virtual_size`, and neither Textual nor co-tui has one.

install_shims() (co_tui/shims/__init__.py) installs it once textual.widget is imported.
tests/shims/test_layout_echo.py checks that a growing answer shows the same screen with one
pass instead of two, and fails once Textual stops asking for the second pass, to say the
shim can go.

Upstream: no upstream issue filed.
"""

from __future__ import annotations

from typing import Any

from textual.geometry import Size
from textual.widget import Widget

TEXTUAL_SIZE_UPDATED = Widget._size_updated  # Textual's own


def size_updated_once(
    self: Widget, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
) -> bool:
    """`Widget._size_updated` as the scroll-only path calls it."""
    return TEXTUAL_SIZE_UPDATED(self, size, virtual_size, container_size, layout=False)


def install_single_layout_pass() -> None:
    """From now on a layout pass does not ask for another one. Idempotent."""
    widget: Any = Widget
    widget._size_updated = size_updated_once
