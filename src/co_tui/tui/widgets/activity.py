"""The activity line: what the session is doing and for how long, with a spinner.

"⠹ waiting for gemini… 3s", "⠼ thinking… 12s", "⠧ running `pip install x` 1m 04s",
"⠋ waiting for you". The chat screen derives `activity` from the session's events
(tui/display.py) and binds it here; the line shows only while there is one. The clock runs
from the moment the activity changed; the spinner's frame follows the same clock, so a still
clock draws a still frame. Its timer runs only while something does: an idle app has no
timer waking it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from co_tui.tui.render.visible_text import one_line, visible_text

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
FRAME_S = 0.1
CANCEL_HINT = "Esc cancels"

Clock = Callable[[], float]


@dataclass(frozen=True)
class Activity:
    """What is happening: `what` in words, `command` shown as code after it, `more` other
    calls running beside it. `key` tells apart two activities that read the same (two runs
    of one command): a new key starts the clock again."""

    what: str
    command: str = ""
    more: int = 0
    key: str = ""


def elapsed_words(seconds: float) -> str:
    """3s, 1m 04s, 2h 05m."""
    whole = int(max(0.0, seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


class ActivityLine(Widget):
    activity: reactive[Activity | None] = reactive(None, init=False)
    cancellable = reactive(False)  # a turn runs: Esc cancels it

    def __init__(self, *, clock: Clock = time.monotonic, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self._since = clock()
        self._ticker: Timer | None = None

    def on_mount(self) -> None:
        self.display = False
        self._ticker = self.set_interval(FRAME_S, self.refresh, pause=True)

    def watch_activity(self, activity: Activity | None) -> None:
        self._since = self.clock()
        self.display = activity is not None
        if self._ticker is not None:
            if activity is None:
                self._ticker.pause()
            else:
                self._ticker.resume()
        self.refresh()

    def render(self) -> Text:
        activity = self.activity
        if activity is None:
            return Text()
        elapsed = self.clock() - self._since
        frame = SPINNER[int(elapsed / FRAME_S) % len(SPINNER)]
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{frame} ", style="bold")
        line.append_text(visible_text(activity.what, keep="", style="italic"))
        tail = Text(f" {elapsed_words(elapsed)}", style="dim")
        if activity.more:
            tail.append(f" (+{activity.more} more)", style="dim")
        if self.cancellable:
            tail.append(f" · {CANCEL_HINT}", style="dim")
        if activity.command:
            room = (self.size.width or 80) - line.cell_len - tail.cell_len - 3
            line.append(" `")
            line.append_text(one_line(activity.command, max(room, 8), style="bold"))
            line.append("`")
        line.append_text(tail)
        return line
