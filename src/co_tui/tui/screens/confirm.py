"""A yes/no question in a modal dialog: Y or the red button does it, N, Escape or the other
button keeps things as they are. Dismisses with True (do it) or False."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen {
        align: center middle;
        background: $background 60%;
    }
    #confirm-dialog {
        width: 64;
        max-width: 90%;
        height: auto;
        border: round $error;
        border-title-color: $error;
        border-title-style: bold;
        background: $surface;
        padding: 1 2;
    }
    #confirm-question { text-style: bold; margin-bottom: 1; }
    #confirm-details { color: $text-muted; margin-bottom: 1; }
    #confirm-buttons { height: auto; align-horizontal: right; }
    #confirm-buttons Button { margin-left: 2; min-width: 14; }
    """

    def __init__(
        self,
        question: str,
        details: str = "",
        *,
        title: str = "Confirm",
        yes: str = "Delete",
        no: str = "Keep",
    ) -> None:
        super().__init__(classes="confirm-screen")
        self.question = question
        self.details = details
        self.dialog_title = title
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog") as dialog:
            dialog.border_title = self.dialog_title
            yield Static(self.question, markup=False, id="confirm-question")
            if self.details:
                yield Static(self.details, markup=False, id="confirm-details")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes_label} (y)", variant="error", id="confirm-yes")
                yield Button(f"{self.no_label} (n)", variant="default", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # Enter alone never deletes

    @on(Button.Pressed, "#confirm-yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-no")
    def _no(self) -> None:
        self.dismiss(False)

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
