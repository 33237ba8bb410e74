"""Above the prompt: the messages sent while a turn runs, waiting for it to end."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from co_tui.tui.render.visible_text import one_line

SHOWN = 4  # the newest are shown; older ones are counted


class QueuedMessages(Static):
    messages: reactive[tuple[str, ...]] = reactive(())

    def watch_messages(self, messages: tuple[str, ...]) -> None:
        self.display = bool(messages)
        text = Text(style="dim", no_wrap=True, overflow="ellipsis")
        hidden = len(messages) - SHOWN
        if hidden > 0:
            text.append(f"queued: {hidden} more\n", style="dim italic")
        for message in messages[-SHOWN:]:
            text.append("queued: ", style="dim italic")
            text.append_text(one_line(message, 200, style="dim"))
            text.append("\n")
        if messages:
            text.append("↑ or Esc takes the last one back to edit", style="dim italic")
        self.update(text)
