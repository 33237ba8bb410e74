"""Terminal notifications: when an approval waits, or a long turn ends, while the user looks
elsewhere (the terminal is not focused: Textual turns focus reporting on and keeps
`App.app_focus`), the terminal is sent OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty),
OSC 777 (VTE terminals such as GNOME Terminal, foot, Ghostty) and the bell. A terminal that
knows neither ignores them. Settings: `notifications` (on/off), `notify_after_s`.

What is sent may come from the model (a tool's arguments): it goes out on one line with
every hidden character shown as an escape (co_tui.safety.visible.safe_line), so it cannot end
the sequence or start one of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

from co_tui.safety.visible import TITLE_LIMIT, safe_line

if TYPE_CHECKING:
    from textual.app import App

TITLE = "co-tui"


class AttentionNeeded(Message):
    """Something waits for the user (posted by a screen; the app notifies if unfocused)."""

    def __init__(self, body: str) -> None:
        super().__init__()
        self.body = body


def notification_sequence(body: str, title: str = TITLE) -> str:
    """OSC 9, OSC 777 and the bell, for `body` (made safe here)."""
    body, title = safe_line(body), safe_line(title, TITLE_LIMIT)
    return f"\x1b]9;{title}: {body}\a\x1b]777;notify;{title};{body}\a\a"


def notify_unfocused(app: App[Any], body: str) -> bool:
    """Send the notification unless the terminal has the focus. True: it was sent."""
    if app.app_focus:
        return False
    # Textual has no public way to write to the terminal (App.bell and copy_to_clipboard use
    # the private driver the same way); this is the one place co-tui does.
    driver = app._driver
    if driver is None:
        return False
    driver.write(notification_sequence(body))
    return True
