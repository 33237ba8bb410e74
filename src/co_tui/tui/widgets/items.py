"""The transcript's simple items: any finished renderable and a note line.

Every item can rebuild itself as a cheap widget (`frozen`) after the transcript archived it.
What the user sent is a `UserMessage` (tui/widgets/user_message.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from co_tui.tui.render.visible_text import visible_text

if TYPE_CHECKING:
    from co_tui.tui.render.markdown import TranscriptMarkdown

WidgetFactory = Callable[[], Widget]


def markdown(text: str, first_code_block: int = 1) -> TranscriptMarkdown:
    from co_tui.tui.render.markdown import (
        TranscriptMarkdown,  # lazy: not needed for the first frame
    )

    return TranscriptMarkdown(text, first_code_block)


def markdown_item(text: str, classes: str = "assistant-message frozen") -> RenderedItem:
    return RenderedItem(markdown(text), classes)


class TranscriptItem:
    """Mixin: an item that can rebuild itself as a cheap widget after being pruned."""

    def archived(self) -> WidgetFactory:
        """How to build this item again: a factory over its data alone. It must not hold
        the widget, whose rendered lines are the memory that archiving frees."""
        raise NotImplementedError

    @property
    def is_settled(self) -> bool:
        return True


class RenderedItem(Static, TranscriptItem):
    """Any finished renderable: a committed answer, a command's output, a note."""

    def __init__(self, renderable: RenderableType, classes: str = "") -> None:
        super().__init__(renderable, classes=classes)
        self._source = renderable
        self._item_classes = classes

    @property
    def plain_text(self) -> str:
        """The item's words, for /find: a Text's plain string, Markdown's source."""
        source = self._source
        if isinstance(source, Text):
            return source.plain
        markup = self._markdown_source
        if markup is not None:
            return markup
        if isinstance(source, str):
            return source
        return ""

    @property
    def _markdown_source(self) -> str | None:
        # rich's Markdown keeps its source in `markup`; its class is not imported for an
        # isinstance check, which would cost the first frame 35 ms.
        markup = getattr(self._source, "markup", None)
        return markup if isinstance(markup, str) else None

    def archived(self) -> WidgetFactory:
        markup = self._markdown_source
        if markup is not None:  # Markdown is parsed again: its tokens are not kept
            return partial(markdown_item, markup, self._item_classes)
        return partial(RenderedItem, self._source, self._item_classes)


class Note(RenderedItem):
    """A status or error line: retries, aborts, interruptions, hints, approval decisions.
    A Text message is shown as it is (it brings its own glyph and styles)."""

    def __init__(self, message: str | Text, level: str = "info") -> None:
        if isinstance(message, str):
            glyph = {"info": "·", "warning": "!", "error": "✗"}.get(level, "·")
            message = Text(f"{glyph} ").append_text(visible_text(message, keep="\n\t"))
        super().__init__(message, classes=f"note note-{level}")
