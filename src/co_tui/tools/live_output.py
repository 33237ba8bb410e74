"""LiveOutput: a running command's output as `ToolOutput` events, its last lines only.

The sandbox tells it the output as it comes (text chunks, stdout and stderr together); it
keeps the last `LIVE_LINES` lines, the one being written included, and emits them whenever
they change. A carriage return starts its line over (a progress bar shows its latest state),
and a line keeps at most `LINE_CHARS` characters, so an event stays small whatever the
command prints. The text is sent as printed: whoever shows it makes its hidden characters
visible, as for the final result.
"""

from __future__ import annotations

from collections import deque

from co_tui.protocol import events as ev
from co_tui.protocol.frontend import FrontendProtocol

LIVE_LINES = 5
LINE_CHARS = 400


class OutputTail:
    """The last `size` lines of a stream of text, the unfinished one included."""

    def __init__(self, size: int = LIVE_LINES) -> None:
        self._done: deque[str] = deque(maxlen=size)
        self._current = ""
        self._restart = False  # a carriage return: the next character starts the line over
        self._size = size

    def feed(self, text: str) -> None:
        first, *rest = text.split("\n")
        if first:
            self._extend(first)
        if not rest:
            return
        self._end_line()
        *complete, last = rest
        for line in complete[-self._size :]:  # only the last lines can show
            if line:
                self._extend(line)
            self._end_line()
        if last:
            self._extend(last)

    def _extend(self, piece: str) -> None:
        head, *overwrites = piece.split("\r")
        if head:
            if self._restart:
                self._current, self._restart = "", False
            self._append(head)
        for segment in overwrites:  # each starts the line over; an empty one, once text comes
            if segment:
                self._current, self._restart = "", False
                self._append(segment)
            else:
                self._restart = True

    def _append(self, text: str) -> None:
        if len(self._current) < LINE_CHARS:
            self._current += text[: LINE_CHARS - len(self._current)]

    def _end_line(self) -> None:
        self._done.append(self._current)
        self._current, self._restart = "", False

    @property
    def lines(self) -> tuple[str, ...]:
        shown = [*self._done, self._current] if self._current else list(self._done)
        return tuple(shown[-self._size :])


class LiveOutput:
    """An `OutputListener` that emits the call's last lines as `ToolOutput` events."""

    def __init__(self, frontend: FrontendProtocol, session_id: str, tool_call_id: str) -> None:
        self.frontend = frontend
        self.session_id = session_id
        self.tool_call_id = tool_call_id
        self._tail = OutputTail()
        self._sent: tuple[str, ...] = ()

    def __call__(self, text: str) -> None:
        self._tail.feed(text)
        lines = self._tail.lines
        if lines != self._sent:
            self._sent = lines
            self.frontend.emit(
                ev.ToolOutput(
                    session_id=self.session_id, tool_call_id=self.tool_call_id, lines=lines
                )
            )
