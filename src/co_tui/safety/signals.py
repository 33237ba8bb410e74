"""SIGTERM and SIGHUP (the terminal closed) stop co-tui the way Ctrl+C stops a turn.

The first one cancels what is running, so the turn ends through its cancellation path (the
partial answer saved, running commands killed, the sandbox cleaned up), and co-tui exits
with 128 + the signal's number once that is done. Later ones are only noted: the clean-up
the first one started must be allowed to finish (SIGKILL still ends co-tui at once).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def exit_code_for(signum: int) -> int:
    """The shell's convention for a process ended by a signal."""
    return 128 + signum


class StopSignals:
    """While installed on the running loop, the first SIGTERM or SIGHUP calls `on_stop`."""

    def __init__(self, on_stop: Callable[[int], None]) -> None:
        self.on_stop = on_stop
        self.signum: int | None = None
        self.armed = True
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def exit_code(self) -> int | None:
        return None if self.signum is None else exit_code_for(self.signum)

    @property
    def name(self) -> str:
        return "" if self.signum is None else signal.Signals(self.signum).name

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            for signum in STOP_SIGNALS:
                loop.add_signal_handler(signum, self.deliver, signum)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no Unix signals
            return
        self._loop = loop

    def uninstall(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            for signum in STOP_SIGNALS:
                loop.remove_signal_handler(signum)

    def disarm(self) -> None:
        """From now on a signal is only remembered (for the exit code): what runs now is
        clean-up that must finish."""
        self.armed = False

    def deliver(self, signum: int) -> None:
        """What the signal does (on the event loop)."""
        if self.signum is not None:
            return
        self.signum = signum
        if self.armed:
            self.on_stop(signum)


@asynccontextmanager
async def cancelled_by_stop_signals() -> AsyncIterator[StopSignals]:
    """Inside, the first SIGTERM or SIGHUP cancels the current task; a cancellation it caused
    that nothing handled ends here. Afterwards `signum` and `exit_code` say which signal
    arrived. `disarm()` it before clean-up that must finish."""
    task = asyncio.current_task()
    assert task is not None
    cancelled = False

    def cancel(signum: int) -> None:
        nonlocal cancelled
        cancelled = True
        task.cancel()

    stop = StopSignals(cancel)
    stop.install()
    try:
        yield stop
    except asyncio.CancelledError:
        if not cancelled:
            raise
        task.uncancel()
    finally:
        stop.uninstall()
