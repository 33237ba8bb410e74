"""Full garbage collections only when the app is idle.

A full (generation 2) collection walks every live object: in this app that froze the UI
for 100-200 ms, and during a stream it fires whenever enough garbage has piled up. The app
turns automatic full collections off and runs one itself once a turn is over and nothing
has happened for IDLE_S; the survivors are then frozen (gc.freeze), so the next idle
collection walks only what is new. Young generations keep collecting as usual.

While a turn runs, a due collection runs every BUSY_CHECK_S between frames, freezing
nothing (a long answer's cycles would otherwise pile up for as long as it streams), and one
that is due when a turn starts runs then, as the idle one would (turns sent back to back
leave no idle moment).

An idle collection is due on Python's own schedule: after FULL_AFTER_YOUNG collections of
the middle generation (the default third threshold). A short turn rarely gets there, so the
seconds after most answers cost nothing; a long answer, or a few turns, do.

IDLE_S is short because such a collection walks only what was made since the last one (the
rest is frozen): 8-20 ms after a few turns, on 2 busy cores. A whole second was too long a
wait for someone who sends the next message at once: with 0.3 s between turns none ever
ran, and each 200-token turn left about 1 MB of cycles behind (RSS after 31 such turns: 181
MB, against 152 MB with collections 0.2 s after each due turn).

Frozen objects are never collected, and a transcript item is a web of cycles: one frozen
while shown and archived later would stay in memory for good (22 MB for a 20k-token
answer). So when the transcript lets items go (`thaw_next`), the next idle collection
unfreezes everything first and walks it all once.

The console script turns collections off before it imports anything (`pause_collections`):
start-up creates some 150,000 objects that live as long as the app, and the young
generations walked them again and again (a full collection, once enough were made, cost the
first frame 20-100 ms; the young ones another 20-30 ms). At the first frame what start-up
made so far is frozen and collections resume, full ones deferred (`first_frame`). Once the
session is loaded the app freezes what start-up made, whatever the count, after collecting
only the young generations. Start-up leaves about 2,000 unreachable objects (0.3 MB) among
150,000: a full collection would walk them all (60-130 ms on 2 cores, just as the prompt
becomes usable) to free so little. They are freed at the first thaw.
"""

from __future__ import annotations

import gc
from typing import Any

IDLE_S = 0.2  # seconds after a turn (or start-up) before a due collection
BUSY_CHECK_S = 2.0  # while a turn runs: how often a due full collection is looked for
FULL_AFTER_YOUNG = 10  # Python's default: a full collection per 10 middle-generation ones
NEVER = 10**9  # gen-1 collections before an automatic full one: in practice, never


def pause_collections() -> None:
    """No collection at all until `IdleCollector.first_frame`."""
    gc.disable()


def defer_full_collections() -> tuple[int, int, int]:
    """No automatic full collection from now on (young generations as usual); returns the
    thresholds as they were."""
    previous = gc.get_threshold()
    young, middle, _ = previous
    gc.set_threshold(young, middle, NEVER)
    return previous


class IdleCollector:
    def __init__(self, app: Any) -> None:
        self.app = app
        self._saved_threshold: tuple[int, int, int] | None = None
        self._timer: Any = None
        self._busy_timer: Any = None
        self._start_up_next = True  # the first one freezes what start-up made
        self._thaw_next = False

    def install(self) -> None:
        if self._saved_threshold is None:
            self._saved_threshold = defer_full_collections()

    def first_frame(self) -> None:
        """Collections paused for start-up (`pause_collections`) resume; what start-up made
        is frozen, not walked."""
        if not gc.isenabled():
            gc.freeze()
            gc.enable()

    def uninstall(self) -> None:
        self._stop_timers()
        if self._saved_threshold is not None:
            gc.set_threshold(*self._saved_threshold)
            self._saved_threshold = None
            gc.unfreeze()

    def busy(self) -> None:
        """A turn runs: a due collection runs as it starts, then every BUSY_CHECK_S until
        `turn_over` (start-up's or released items' `idle_soon` meanwhile does not stop it)."""
        self._stop_timers()
        if self._saved_threshold is not None:
            # Turns sent back to back leave no idle moment: the idle collection, when one is
            # due, runs as the next turn starts (before its request, not during its answer).
            self._collect_due()
            self._busy_timer = self.app.set_interval(BUSY_CHECK_S, self._collect_while_busy)

    def turn_over(self) -> None:
        self._stop_timers()
        self.idle_soon()

    def _stop_timers(self) -> None:
        self._stop_idle_timer()
        if self._busy_timer is not None:
            self._busy_timer.stop()
            self._busy_timer = None

    def _stop_idle_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def thaw_next(self) -> None:
        """Frozen objects may have become garbage: the next idle collection frees them."""
        self._thaw_next = True

    def idle_soon(self) -> None:
        self._stop_idle_timer()
        if self._saved_threshold is not None:  # not once uninstalled: the app is closing
            self._timer = self.app.set_timer(IDLE_S, self._collect)

    def _collect(self) -> None:
        self._timer = None
        if self._saved_threshold is None or getattr(self.app, "turn_running", False):
            return  # the app is closing; or the turn's end schedules another
        self._collect_due()

    def _collect_due(self) -> None:
        _, _, young_collections = gc.get_count()
        start_up, thaw = self._start_up_next, self._thaw_next
        if not (start_up or thaw) and young_collections < FULL_AFTER_YOUNG:
            return
        self._start_up_next = self._thaw_next = False
        if thaw:
            gc.unfreeze()
        full = thaw or not start_up  # start-up's little garbage is frozen, not walked for
        gc.collect(2 if full else 1)
        gc.freeze()

    def _collect_while_busy(self) -> None:
        """A long answer makes cycles at every frame; with full collections only when idle
        they piled up for as long as it streamed (~20 MB a minute at 1,000 characters a
        second). A due one runs here, between frames, and freezes nothing: what this turn
        made is still changing, and a frozen cycle is never freed."""
        _, _, young_collections = gc.get_count()
        if young_collections >= FULL_AFTER_YOUNG:
            gc.collect(2)
