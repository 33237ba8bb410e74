"""Textual's terminal driver, made to outlive the terminal hanging up (its window closed, the
ssh connection dropped) until SIGHUP has ended the app (co_tui/signals.py).

After a hangup every read and write on the terminal fails (EIO). Textual's writer thread dies
at the first failed write and the app then blocks for good once its output queue is full (the
SIGCONT that comes with the hangup restarts the driver and redraws everything); a failed read
in the input thread makes the app panic. Here output to a hung-up terminal is dropped and the
input ends quietly, so the turn is cancelled and saved before the app exits.
"""

from __future__ import annotations

import contextlib
from typing import Any, TextIO

from textual.drivers.linux_driver import LinuxDriver


class _DropWhenGone:
    """The terminal's output stream; what cannot be written any more is dropped."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> None:
        with contextlib.suppress(OSError):
            self._stream.write(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError):
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class HangupSafeDriver(LinuxDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The stream Textual's writer thread writes to (a private attribute of Textual 8.2).
        self._file = _DropWhenGone(self._file)  # type: ignore[has-type]

    def run_input_thread(self) -> None:
        with contextlib.suppress(OSError):  # the terminal hung up: nothing more to read
            super().run_input_thread()
