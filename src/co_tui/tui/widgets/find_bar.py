"""The find bar (Ctrl+F, /find): a search field above the prompt and where the search is.

Typing searches at once; Enter or F3 shows the next older match, Shift+Enter or Shift+F3 the
next newer one; Esc closes the bar and gives the focus back to where it was at once (keys
typed after Esc while the app was busy then reach the prompt, not the closed bar's field). It
only asks (`Find`, `Closed`); the chat screen has the transcript search and hands back where
it is (`show_result`).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static


class FindBar(Horizontal):
    DEFAULT_CSS = """
    FindBar {
        display: none;
        height: 1;
        margin-top: 1;
        background: $boost;
        border-left: outer $secondary;
    }
    FindBar.-open {
        display: block;
    }
    FindBar > Input {
        width: 1fr;
    }
    FindBar > .find-status {
        width: auto;
        min-width: 12;
        padding: 0 1;
        color: $text-muted;
    }
    FindBar > .find-status.-none {
        color: $warning;
    }
    """

    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("f3", "step(1)", "Next (older)", show=False),
        Binding("shift+enter,shift+f3", "step(-1)", "Previous (newer)", show=False),
        # A priority binding runs as the app reads the key, before it hands on the keys
        # typed after it: those go where the focus is once the bar closed.
        Binding("escape", "close", "Close find", show=False, priority=True),
    ]

    @dataclass
    class Find(Message):
        """Show the match for `query`: the newest (step 0), the next older (+1), newer (-1)."""

        query: str
        step: int

    class Closed(Message):
        pass

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._focus_before: Widget | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Find in the conversation · Enter next · Esc closes", compact=True)
        yield Static("", classes="find-status", markup=False)

    @property
    def field(self) -> Input:
        return self.query_one(Input)

    @property
    def status(self) -> Static:
        return self.query_one(".find-status", Static)

    def open(self, text: str = "") -> None:
        focused = self.screen.focused
        if focused is not None and self not in focused.ancestors_with_self:
            self._focus_before = focused
        self.add_class("-open")
        field = self.field
        if text and text != field.value:
            field.value = text  # Input.Changed searches
        elif field.value:
            self.post_message(self.Find(field.value, 0))
        field.focus()
        field.select_all()

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def show_result(self, position: int, count: int) -> None:
        query = self.field.value
        none = bool(query) and count == 0
        self.status.set_class(none, "-none")
        if not query:
            self.status.update("")
        elif none:
            self.status.update("no match")
        else:
            self.status.update(f"{position} of {count}")

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Find(event.value, 0))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_step(1)

    def action_step(self, step: int) -> None:
        self.post_message(self.Find(self.field.value, step))

    def action_close(self) -> None:
        self.remove_class("-open")
        back, self._focus_before = self._focus_before, None
        if back is not None and back.is_attached:
            self.screen.set_focus(back)  # now, not later as `focus()` would
        self.post_message(self.Closed())
