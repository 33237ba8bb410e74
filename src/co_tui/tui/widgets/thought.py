"""A "thought for N s" line in the transcript where the model thought; it unfolds (a click,
or Enter once focused) to the thinking text, its hidden characters shown as escapes.

The thinking streams live in the sidebar (Ctrl+T); this line is what stays.
"""

from __future__ import annotations

from functools import partial

from textual.widgets import Collapsible, Static

from co_tui.tui.render.visible_text import visible_text
from co_tui.tui.widgets.activity import elapsed_words
from co_tui.tui.widgets.items import TranscriptItem, WidgetFactory

NOT_SHARED = "(the provider did not share the thinking text)"


def thought_title(duration_s: float | None) -> str:
    if duration_s is None:
        return "thought"
    return f"thought for {elapsed_words(max(duration_s, 1.0))}"


class Thought(Collapsible, TranscriptItem):
    def __init__(self, text: str, duration_s: float | None) -> None:
        body = visible_text(text.strip() or NOT_SHARED, keep="\n\t", style="italic")
        super().__init__(
            Static(body, classes="thought-text", markup=False),
            title=thought_title(duration_s),
            collapsed=True,
            classes="thought",
        )
        self.text = text
        self.duration_s = duration_s

    def archived(self) -> WidgetFactory:
        return partial(Thought, self.text, self.duration_s)
