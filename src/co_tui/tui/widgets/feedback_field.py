"""The approval dialog's "no, and tell it what to do instead": one line for the user's words.

Enter posts `FeedbackField.Submitted` with what was typed (the dialog denies the call and
the model reads the words); the dialog handles Esc (back to its keys). Styles:
styles/approval.tcss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

LABEL = "Tell the assistant what to do instead (it reads your words):"
PLACEHOLDER = "e.g. use uv instead of pip"


class FeedbackField(Vertical):
    @dataclass
    class Submitted(Message):
        """Enter in the field: `words` as typed ("" when nothing was)."""

        field: FeedbackField
        words: str

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.input = Input(
            placeholder=PLACEHOLDER,
            id="approval-feedback-input",
            select_on_focus=False,
            compact=True,
        )

    def compose(self) -> ComposeResult:
        yield Static(LABEL, id="approval-feedback-label", markup=False)
        yield self.input

    def focus_input(self) -> None:
        self.input.focus()
        self.input.cursor_position = len(self.input.value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted(self, event.value))
