"""A text cursor that stops blinking when the user stops typing.

A blinking cursor repaints its line twice a second for as long as the app is open, so an
idle co-tui would never be idle (it cost 0.05 s of CPU every 5 s). Like GNOME's terminal,
which stops blinking after 10 s, the cursor blinks while the user is active and then rests,
visible. A key, a paste, a click or the focus coming back starts it again.
"""

from __future__ import annotations

import time

from textual import events
from textual.timer import Timer
from textual.widgets import TextArea

REST_AFTER_S = 10.0


class RestingCursorTextArea(TextArea):
    """A TextArea whose cursor blinks for REST_AFTER_S after the last input, then rests."""

    _last_input = 0.0
    _rest_timer: Timer | None = None

    def on_mount(self) -> None:
        self._user_active()

    def on_key(self, event: events.Key) -> None:
        self._user_active()

    def on_paste(self, event: events.Paste) -> None:
        self._user_active()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._user_active()

    def on_focus(self, event: events.Focus) -> None:
        self._user_active()

    def _user_active(self) -> None:
        self._last_input = time.monotonic()
        if self._rest_timer is None:
            self.cursor_blink = True
            self._rest_timer = self.set_timer(REST_AFTER_S, self._rest_if_quiet)

    def _rest_if_quiet(self) -> None:
        quiet_for = time.monotonic() - self._last_input
        if quiet_for < REST_AFTER_S:  # input came while the timer ran: wait the rest
            self._rest_timer = self.set_timer(REST_AFTER_S - quiet_for, self._rest_if_quiet)
            return
        self._rest_timer = None
        self.cursor_blink = False  # TextArea then keeps the cursor shown, without a timer
