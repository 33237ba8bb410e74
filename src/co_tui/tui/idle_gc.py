"""Full garbage collections only when the app is idle.

A full (generation 2) collection walks every live object: in this app that froze the UI
for 100-200 ms, and during a stream it fires whenever enough garbage has piled up. The app
turns automatic full collections off and runs one itself once a turn is over and nothing
has happened for IDLE_S; the survivors are then frozen (gc.freeze), so the next idle
collection walks only what is new. Young generations keep collecting as usual.

The console script turns automatic full collections off before it imports anything
(`defer_full_collections`): start-up creates objects enough to trigger one, which cost the
first frame 20-100 ms. The app's first idle collection then freezes what start-up made.
"""

from __future__ import annotations

import gc
from typing import Any

IDLE_S = 1.0
NEVER = 10**9  # gen-1 collections before an automatic full one: in practice, never


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

    def install(self) -> None:
        if self._saved_threshold is None:
            self._saved_threshold = defer_full_collections()

    def uninstall(self) -> None:
        self.busy()
        if self._saved_threshold is not None:
            gc.set_threshold(*self._saved_threshold)
            self._saved_threshold = None
            gc.unfreeze()

    def busy(self) -> None:
        """Something is streaming: no full collection until idle again."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def idle_soon(self) -> None:
        self.busy()
        self._timer = self.app.set_timer(IDLE_S, self._collect)

    def _collect(self) -> None:
        self._timer = None
        if getattr(self.app, "turn_running", False):
            return  # the turn's end schedules another
        gc.collect()
        gc.freeze()
