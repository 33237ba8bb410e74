"""At most a few `tool_output` events a second per tool call in `co-tui -p`'s stream-json.

A chatty command (a build, `find /`, a loop of echoes) sends its last lines at every chunk it
prints: thousands of JSON lines a second that only a progress display would want, and no
script. Here a call's `ToolOutput` goes out at once when none went out in the last
`MIN_INTERVAL_S`; otherwise it waits, replacing the one waiting before it (each holds the
latest lines in full), and goes out when the interval is over, or before any other event
(its `ToolResult` first of all): the last lines always come out, and always in order.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from co_tui.protocol import events as ev

MIN_INTERVAL_S = 0.1  # at most ~10 a second per call

Write = Callable[[ev.TurnEvent], None]


class ToolOutputThrottle:
    def __init__(self, write: Write, clock: Callable[[], float] = time.monotonic) -> None:
        self._write = write
        self._clock = clock
        self._last_sent: dict[str, float] = {}  # by tool call id
        self._waiting: dict[str, ev.ToolOutput] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def emit(self, event: ev.TurnEvent) -> None:
        """Write `event` now, or for a `ToolOutput` when its call's interval is over."""
        if not isinstance(event, ev.ToolOutput):
            self.flush()
            self._write(event)
            return
        call = event.tool_call_id
        wait = self._last_sent.get(call, -MIN_INTERVAL_S) + MIN_INTERVAL_S - self._clock()
        if wait <= 0 and call not in self._waiting:
            self._send(event)
            return
        self._waiting[call] = event
        if call not in self._timers:
            self._flush_later(call, max(wait, 0.0))

    def flush(self) -> None:
        """Every waiting event out, oldest call first."""
        for call in list(self._waiting):
            self._flush_call(call)

    def _flush_later(self, call: str, delay: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # told from a thread: the next event or the result flushes it
            return
        self._timers[call] = loop.call_later(delay, self._flush_call, call)

    def _flush_call(self, call: str) -> None:
        timer = self._timers.pop(call, None)
        if timer is not None:
            timer.cancel()
        event = self._waiting.pop(call, None)
        if event is not None:
            self._send(event)

    def _send(self, event: ev.ToolOutput) -> None:
        self._last_sent[event.tool_call_id] = self._clock()
        self._write(event)
