"""Ctrl+R: search the prompts sent before, as in a shell (and Claude Code, Codex).

A field in the prompt's place and the newest matching prompts under it: typing filters (every
word typed must appear, in any case), Up/Down or Ctrl+R again move to older matches, Enter
puts the chosen prompt in the prompt, Esc leaves the prompt as it was. Each prompt shows on
one line (line breaks as ⏎, hidden characters as escapes). It only asks (`Chosen`,
`Closed`); the chat screen puts the text in the prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from co_tui.tui.render.visible_text import one_line

SHOWN = 6
LINE_CELLS = 400  # a prompt is cut here, then to the widget's width: one line each


def matches(entries: Sequence[str], query: str) -> list[str]:
    """The distinct entries that contain every word of `query` (any case), newest first;
    `entries` are oldest first, as the history keeps them."""
    words = query.casefold().split()
    found: list[str] = []
    seen: set[str] = set()
    for entry in reversed(entries):
        if entry in seen:
            continue
        folded = entry.casefold()
        if all(word in folded for word in words):
            seen.add(entry)
            found.append(entry)
    return found


class HistorySearch(Vertical):
    DEFAULT_CSS = """
    HistorySearch {
        display: none;
        height: auto;
        border: round $secondary;
        border-title-color: $text-muted;
        padding: 0 1;
    }
    HistorySearch.-open {
        display: block;
    }
    HistorySearch > Input {
        width: 1fr;
    }
    HistorySearch > OptionList {
        height: auto;
        max-height: 6;
        border: none;
        padding: 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    HistorySearch > OptionList:focus {
        border: none;
    }
    """

    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("down,ctrl+r", "move(1)", "Older", show=False),
        Binding("up", "move(-1)", "Newer", show=False),
        Binding("escape", "close", "Cancel search", show=False),
    ]

    @dataclass
    class Chosen(Message):
        """Put `text` in the prompt."""

        text: str

    class Closed(Message):
        """The search ended; the prompt is as it was (or holds what was chosen)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._entries: Sequence[str] = ()
        self._distinct = 0
        self._found: list[str] = []
        self.field = Input(placeholder="search the prompts you sent", compact=True)
        self.list = OptionList(compact=True)
        self.list.can_focus = False  # the field keeps the keys

    def compose(self) -> ComposeResult:
        yield self.field
        yield self.list

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def open(self, entries: Sequence[str]) -> None:
        """Search `entries` (oldest first); the newest shows first."""
        self._entries = entries
        self._distinct = len(set(entries))
        self.add_class("-open")
        self.field.value = ""
        self._show("")
        self.field.focus()

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self._show(event.value)

    def _show(self, query: str) -> None:
        self._found = matches(self._entries, query)
        self.list.clear_options()
        words = query.split()
        options = []
        for entry in self._found[:SHOWN]:
            label = one_line(entry, LINE_CELLS)
            if words:
                label.highlight_words(words, style="bold underline", case_sensitive=False)
            options.append(Option(label))
        self.list.add_options(options)
        if options:
            self.list.highlighted = 0
        self._title()

    def _title(self) -> None:
        if not self._entries:
            status = "no prompts sent yet"
        elif not self._found:
            status = "no match"
        else:
            status = f"{len(self._found)} of {self._distinct}"
        self.border_title = Text.assemble(
            ("history", "bold"), f" · {status} · ↑↓ choose · Enter puts it in the prompt · Esc"
        )

    def action_move(self, step: int) -> None:
        shown = self.list.option_count
        if shown:
            current = self.list.highlighted or 0
            self.list.highlighted = max(0, min(shown - 1, current + step))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        chosen = self.list.highlighted
        if chosen is not None and chosen < len(self._found):
            self.post_message(self.Chosen(self._found[chosen]))
        self.action_close()

    def action_close(self) -> None:
        self.remove_class("-open")
        self._entries, self._found = (), []
        self.list.clear_options()
        self.post_message(self.Closed())
