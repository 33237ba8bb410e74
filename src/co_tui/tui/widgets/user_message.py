"""What the user sent, shown as it was typed: plain text (no Markdown, no markup), every
space and line break kept, hidden characters shown as escapes (tui/render/visible_text.py).

A long paste is folded to a summary line and its first lines; a message sent with a paste
folded in the prompt (tui/pasted.py) is folded to a summary line and the message as it was
typed, each paste's label in its place. A click, or Enter/Space when it has focus (Tab
reaches it), unfolds it. Folded, only the preview is laid out, so adding
a 100 KB paste costs no more than a short message.
"""

from __future__ import annotations

from functools import partial

from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.reactive import reactive
from textual.widget import Widget

from co_tui.tui.render.visible_text import visible_text
from co_tui.tui.widgets.items import TranscriptItem, WidgetFactory

FOLD_LINES = 20
FOLD_CHARS = 2_000
PREVIEW_LINES = 4
PREVIEW_LINE_CHARS = 400  # a preview line this long is cut: it only says what the paste is


def is_long(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


def paste_summary(text: str) -> str:
    """'[pasted 1,500 lines, 100 KB]': the size of a folded paste."""
    lines = text.count("\n") + 1
    size = len(text.encode("utf-8", "surrogatepass"))
    amount = f"{size / 1024:,.0f} KB" if size >= 1024 else f"{size:,} bytes"
    return f"[pasted {lines:,} line{'s' if lines != 1 else ''}, {amount}]"


class UserMessage(Widget, TranscriptItem):
    DEFAULT_CSS = """
    UserMessage {
        height: auto;
    }
    """

    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("enter,space", "toggle_fold", "Expand / fold", show=False),
    ]

    expanded = reactive(False, layout=True)

    def __init__(self, text: str, typed: str | None = None) -> None:
        """`typed`: the message as the prompt showed it, when a paste was folded into it."""
        self.typed = typed if typed != text else None
        self.foldable = self.typed is not None or is_long(text)
        super().__init__(classes="user-message" + (" -foldable" if self.foldable else ""))
        self.text = text
        self.can_focus = self.foldable

    @property
    def plain_text(self) -> str:
        return self.text

    @property
    def folded(self) -> bool:
        return self.foldable and not self.expanded

    def render(self) -> Text:
        if not self.foldable:
            return visible_text(self.text, keep="\n\t")
        if self.expanded:
            shown = visible_text(self.text, keep="\n\t")
            return Text.assemble(self._summary("click to fold"), "\n", shown)
        if self.typed is not None:
            typed = visible_text(self.typed, keep="\n\t")
            return Text.assemble(self._summary("click to expand"), "\n", typed)
        lines = self.text.split("\n", PREVIEW_LINES)[:PREVIEW_LINES]
        preview = "\n".join(line[:PREVIEW_LINE_CHARS] for line in lines)
        return Text.assemble(
            self._summary("click to expand"),
            "\n",
            visible_text(preview, keep="\n\t"),
            Text("\n…", style="dim"),
        )

    def _summary(self, action: str) -> Text:
        return Text(f"{paste_summary(self.text)} · {action}", style="dim italic")

    def action_toggle_fold(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: Click) -> None:
        if self.foldable:
            event.stop()
            self.action_toggle_fold()

    def archived(self) -> WidgetFactory:
        return partial(UserMessage, self.text, self.typed)
