"""The transcript's simple items: a user turn, any finished renderable, a note line.

Every item can rebuild itself as a cheap widget (`frozen`) after the transcript archived it.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from co_tui.tui.visible_text import visible_text


def markdown(text: str) -> RenderableType:
    from co_tui.tui.markdown import TranscriptMarkdown  # lazy: not needed for the first frame

    return TranscriptMarkdown(text)


class TranscriptItem:
    """Mixin: an item that can rebuild itself as a cheap widget after being pruned."""

    def frozen(self) -> Widget:
        raise NotImplementedError

    @property
    def is_settled(self) -> bool:
        return True


class UserMessage(Static, TranscriptItem):
    def __init__(self, text: str) -> None:
        super().__init__(markdown(text), classes="user-message")
        self.text = text

    def frozen(self) -> Widget:
        return UserMessage(self.text)


class RenderedItem(Static, TranscriptItem):
    """Any finished renderable: a committed answer, a command's output, a note."""

    def __init__(self, renderable: RenderableType, classes: str = "") -> None:
        super().__init__(renderable, classes=classes)
        self._source = renderable
        self._item_classes = classes

    def frozen(self) -> Widget:
        return RenderedItem(self._source, self._item_classes)


class Note(RenderedItem):
    """A status or error line: retries, aborts, interruptions, hints, approval decisions.
    A Text message is shown as it is (it brings its own glyph and styles)."""

    def __init__(self, message: str | Text, level: str = "info") -> None:
        if isinstance(message, str):
            glyph = {"info": "·", "warning": "!", "error": "✗"}.get(level, "·")
            message = Text(f"{glyph} ").append_text(visible_text(message, keep="\n\t"))
        super().__init__(message, classes=f"note note-{level}")
