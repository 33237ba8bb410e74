"""Textual's terminal driver, made to outlive the terminal hanging up (its window closed, the
ssh connection dropped) until SIGHUP has ended the app (co_tui/safety/signals.py).

After a hangup every read and write on the terminal fails (EIO). Textual's writer thread dies
at the first failed write and the app then blocks for good once its output queue is full (the
SIGCONT that comes with the hangup restarts the driver and redraws everything); a failed read
in the input thread makes the app panic. Here output to a hung-up terminal is dropped and the
input ends quietly, so the turn is cancelled and saved before the app exits. A terminal that
is gone without a SIGHUP (a pty whose other end closed, but that was not the controlling
terminal) gets one after a grace period, so the app never lives on with no terminal.

The input thread also sleeps until there is input: Textual's own loop wakes ten times a
second to check whether it should stop, which kept an idle co-tui from ever being idle.
Here the thread waits on the terminal and on a wake-up pipe that `disable_input` writes to,
with a timeout only while the key parser waits to tell a lone Escape from a sequence.

Each input thread has a wake-up pipe of its own, made when application mode starts and
closed once that thread has ended. Textual suspends the app (Ctrl+G's editor, Ctrl+Z) by
stopping application mode and calling `close()`, then starts it again: a pipe closed by the
suspend and used by the next thread was a closed descriptor (or, worse, a reused one).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
from codecs import getincrementaldecoder
from typing import Any, TextIO

from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

# After the terminal's input ends, how long a real SIGHUP has to arrive before we send one.
HANGUP_GRACE_S = 1.0
READ_SIZE = 4096


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


class _WakePipe:
    """A pipe whose write end wakes an input thread waiting on its read end."""

    def __init__(self) -> None:
        self.reader, self.writer = os.pipe()
        os.set_blocking(self.reader, False)
        os.set_blocking(self.writer, False)
        self.closed = False

    def wake(self) -> None:
        if not self.closed:
            with contextlib.suppress(BlockingIOError):  # full: a wake-up is pending anyway
                os.write(self.writer, b"x")

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.reader)
            os.close(self.writer)


class HangupSafeDriver(LinuxDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The stream Textual's writer thread writes to (a private attribute of Textual 8.2).
        # Textual leaves it unannotated, so its type is inferred from sys.__stderr__ alone,
        # though its writer thread takes any IO[str].
        if self._file is not None:
            self._file = _DropWhenGone(self._file)  # type: ignore[assignment]
        self._wake: _WakePipe | None = None  # the running input thread's

    def start_application_mode(self) -> None:
        if not self._input_thread_running():
            self._close_wake_pipe()  # left by a start whose input thread never ran
        self._wake = _WakePipe()
        super().start_application_mode()

    def run_input_thread(self) -> None:
        wake = self._wake
        assert wake is not None  # made before Textual starts the thread
        try:
            terminal_gone = self._read_until_stopped(wake)
        except OSError:  # the terminal hung up: nothing more to read
            terminal_gone = True
        # A real SIGHUP usually follows: the app then stops, disabling input, and no one waits
        # out the grace period (a process that lingers after its terminal closed).
        if terminal_gone and not self.exit_event.wait(HANGUP_GRACE_S):
            os.kill(os.getpid(), signal.SIGHUP)  # ends the app as a hangup does (safety/signals.py)

    def _read_until_stopped(self, wake: _WakePipe) -> bool:
        """Feed the terminal's input to the app until input is disabled (False) or the
        terminal's input ends (True)."""
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        with selectors.SelectSelector() as selector:  # as Textual: works for any tty fd
            selector.register(self.fileno, selectors.EVENT_READ)
            selector.register(wake.reader, selectors.EVENT_READ)
            while not self.exit_event.is_set():
                for key, _ in selector.select(_parser_timeout(parser)):
                    if key.fd != self.fileno:
                        continue  # the wake-up pipe: the loop's condition decides
                    data = os.read(self.fileno, READ_SIZE)
                    if not data:
                        return True
                    for event in parser.feed(decode(data)):
                        self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)
        return False

    def disable_input(self) -> None:
        if self._wake is not None:
            self._wake.wake()
        super().disable_input()  # joins the input thread
        if not self._input_thread_running():
            self._close_wake_pipe()

    def close(self) -> None:
        super().close()
        if not self._input_thread_running():
            self._close_wake_pipe()

    def _input_thread_running(self) -> bool:
        thread = self._key_thread
        return thread is not None and thread.is_alive()

    def _close_wake_pipe(self) -> None:
        wake, self._wake = self._wake, None
        if wake is not None:
            wake.close()


def _parser_timeout(parser: XTermParser) -> float | None:
    """How long the input thread may sleep: for ever, unless the parser holds an Escape whose
    meaning depends on whether more input follows soon (a private field of Textual 8.2)."""
    deadline: float | None = parser._timeout_time
    if deadline is None:
        return None
    return max(0.0, deadline - get_time())
