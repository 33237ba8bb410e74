""" "↓ new output": shown over the transcript's foot when output arrived below while the user
reads further up. A click (or End, the chat screen's key) scrolls down and follows again."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import Static

LABEL = "↓ new output · End"


class NewOutputMarker(Static):
    class Pressed(Message):
        """The user asked to see the new output."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(LABEL, markup=False, **kwargs)  # type: ignore[arg-type]

    def on_mount(self) -> None:
        self.display = False

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Pressed())
