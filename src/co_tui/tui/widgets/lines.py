"""RenderedLines: renderables kept as pre-rendered lines (Textual's Line API).

Adding a block renders only that block; layout asks for a height (a length, O(1)); a paint
renders only the visible lines. Blocks are re-rendered only when the width changes. This is
what keeps a long streamed answer cheap: its finished blocks never become widgets.

The last lines may be a tail that is replaced as it grows (a streamed answer's unfinished
block). Any change asks for a layout only when the height changes: in Textual a layout
reflows every widget on the screen, a repaint only this one.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.segment import Segment
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget


class RenderedLines(Widget):
    DEFAULT_CSS = """
    RenderedLines {
        height: auto;
    }
    """

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._blocks: list[RenderableType] = []
        self._lines: list[Strip] = []
        self._tail: RenderableType | None = None
        self._tail_lines: list[Strip] = []
        self._width = 0

    @property
    def block_count(self) -> int:
        return len(self._blocks)

    def add(self, renderable: RenderableType, *, replacing_tail: bool = False) -> None:
        """A finished block after the others; `replacing_tail`: it takes the tail's place."""
        height = self._height
        self._blocks.append(renderable)
        if self._width:
            self._lines.extend(self._render(renderable, self._width))
        if replacing_tail:
            self._tail, self._tail_lines = None, []
        self._changed(height)

    def set_tail(self, renderable: RenderableType | None) -> None:
        """Show `renderable` after the blocks, in place of the previous tail."""
        height = self._height
        self._tail = renderable
        self._tail_lines = self._render_tail(self._width)
        self._changed(height)

    @property
    def _height(self) -> int:
        return len(self._lines) + len(self._tail_lines)

    def _changed(self, height: int) -> None:
        self.refresh(layout=not self._width or self._height != height)

    def _render(self, renderable: RenderableType, width: int) -> list[Strip]:
        console = self.app.console
        options = console.options.update_width(width).update(height=None)
        segments = console.render(renderable, options)
        lines = list(Segment.split_lines(segments))
        strips = Strip.from_lines(lines)
        for strip in strips:
            strip.adjust_cell_length(width)
        return strips

    def _render_tail(self, width: int) -> list[Strip]:
        if self._tail is None or not width:
            return []
        return self._render(self._tail, width)

    def _ensure_width(self, width: int) -> None:
        if width != self._width and width > 0:
            self._width = width
            self._lines = [s for block in self._blocks for s in self._render(block, width)]
            self._tail_lines = self._render_tail(width)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._ensure_width(width)
        return self._height

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        self._ensure_width(width)
        lines = self._lines
        if y >= len(lines):
            lines, y = self._tail_lines, y - len(lines)
        if y >= len(lines):
            return Strip.blank(width, self.rich_style)
        return lines[y].crop_extend(0, width, self.rich_style).apply_style(self.rich_style)
