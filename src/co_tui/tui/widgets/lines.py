"""RenderedLines: renderables kept as pre-rendered lines (Textual's Line API).

Adding a block renders only that block; layout asks for a height (a length, O(1)); a paint
renders only the visible lines. Blocks are re-rendered only when the width changes. This is
what keeps a long streamed answer cheap: its finished blocks never become widgets.

While the lines change, a painted line (cropped to the width, in the widget's style) is kept
until the width, the style or that line changes: a streamed answer repaints its visible
lines at every frame (10 a second), and only the tail's lines change between them. Once they
have settled, Textual's own line cache keeps what was painted, and a second copy here would
only grow a long session's memory. The widget's style is looked up once a paint, not once a
line (Textual's `rich_style` walks every ancestor).

The last lines may be a tail that is replaced as it grows (a streamed answer's unfinished
block). Any change asks for a layout only when the height changes: in Textual a layout
reflows every widget on the screen. Otherwise only the lines that changed are painted again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

PAINTED_LINES = 256  # a few screens of painted lines

# A line kept as its segments, not as a Strip: a Strip caches what is made of it (cropped,
# styled, divided), so a kept Strip would keep every painted copy of itself for as long as
# the transcript lives. Strips are made when a line is painted and kept only in `_painted`.
_Line = tuple[Segment, ...]


class RenderedLines(Widget):
    DEFAULT_CSS = """
    RenderedLines {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._blocks: list[RenderableType] = []
        self._lines: list[_Line] = []
        self._tail: RenderableType | None = None
        self._tail_lines: list[_Line] = []
        self._width = 0
        self._tail_version = 0  # which tail a painted tail line was painted from
        self._paint_style: Style | None = None
        self._batch_start: tuple[int, int] | None = None  # (height, lines) when a batch began
        # Painted lines: a committed line by its y, a tail line by (its y in the tail, version).
        self._painted: LRUCache[int | tuple[int, int], Strip] = LRUCache(PAINTED_LINES)
        self._keep_painted = True

    @property
    def block_count(self) -> int:
        return len(self._blocks)

    def add(self, renderable: RenderableType, *, replacing_tail: bool = False) -> None:
        """A finished block after the others; `replacing_tail`: it takes the tail's place."""
        height, first_changed = self._height, len(self._lines)
        self._blocks.append(renderable)
        if self._width:
            self._lines.extend(self._render_block(renderable, self._width))
        if replacing_tail:
            self._tail, self._tail_lines = None, []
        self._changed(height, first_changed)

    def set_tail(self, renderable: RenderableType | None) -> None:
        """Show `renderable` after the blocks, in place of the previous tail."""
        height = self._height
        self._tail = renderable
        self._tail_lines = self._render_tail(self._width)
        self._tail_version += 1
        self._changed(height, len(self._lines))

    @property
    def _height(self) -> int:
        return len(self._lines) + len(self._tail_lines)

    @contextmanager
    def batch_changes(self) -> Iterator[None]:
        """Changes made inside are painted together when it ends: one layout, not one per
        change, however often the event loop runs meanwhile."""
        self._batch_start = (self._height, len(self._lines))
        try:
            yield
        finally:
            height, first_changed = self._batch_start
            self._batch_start = None
            self._changed(height, first_changed)

    def _changed(self, height: int, first_changed: int) -> None:
        """Lines from `first_changed` on may differ; `height`: the height before."""
        if self._batch_start is not None:
            return  # painted when the batch ends
        if not self._width or self._height != height:
            self.refresh(layout=True)
        elif first_changed < height:  # only these lines are painted again
            self.refresh(Region(0, first_changed, self._width, height - first_changed))

    def _render_block(self, renderable: RenderableType, width: int) -> list[_Line]:
        console = self.app.console
        options = console.options.update_width(width).update(height=None)
        segments = console.render(renderable, options)
        return [tuple(line) for line in Segment.split_lines(segments)]

    def _render_tail(self, width: int) -> list[_Line]:
        if self._tail is None or not width:
            return []
        return self._render_block(self._tail, width)

    def _ensure_width(self, width: int) -> None:
        if width != self._width and width > 0:
            self._width = width
            self._lines = [s for block in self._blocks for s in self._render_block(block, width)]
            self._tail_lines = self._render_tail(width)
            self._painted.clear()

    def lines_settled(self) -> None:
        """The lines will not change again (the answer is complete): painted lines are no
        longer kept here."""
        self._keep_painted = False
        self._painted.clear()

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._ensure_width(width)
        return self._height

    def render_lines(self, crop: Region) -> list[Strip]:
        style = self.rich_style
        if style != self._paint_style:
            self._paint_style = style
            self._painted.clear()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        self._ensure_width(width)
        style = self.rich_style if self._paint_style is None else self._paint_style
        lines = self._lines
        key: int | tuple[int, int] = y
        if y >= len(lines):
            lines, y = self._tail_lines, y - len(lines)
            key = (y, self._tail_version)
        if y >= len(lines):
            return Strip.blank(width, style)
        painted = self._painted.get(key)
        if painted is None:
            painted = Strip(lines[y]).crop_extend(0, width, style).apply_style(style)
            if self._keep_painted:
                self._painted[key] = painted
        return painted
