"""A small model caught in a loop: the same sentence or lines over and over until the token
cap (SmolLM2 after a denied call wrote "The user denied this action." a hundred times, 25 s
of a frozen-looking stream). The embedded model's answer stops once its end is one piece of
text repeated REPEATS times in a row; the repeats already shown stay.

Only a piece of MIN_PERIOD characters or more with a letter in it counts, and the repeated run
must be at least MIN_RUN characters: a rule of dashes or a table's separator never ends an
answer, nor does a short phrase said a few times."""

from __future__ import annotations

REPEATS = 4
MIN_PERIOD = 8
MAX_PERIOD = 400
MIN_RUN = 120
KEPT = MAX_PERIOD * REPEATS  # the most of the answer a check needs


def repeats_to_stop(piece: str) -> int:
    """How many times in a row `piece` must end an answer before the answer is a loop."""
    return max(REPEATS, -(-MIN_RUN // len(piece)))


def repeated_tail(text: str) -> str | None:
    """The piece that `text` ends with, repeated REPEATS times in a row (a short piece: as
    often as it takes to fill MIN_RUN characters), or None."""
    # A loop of period p repeats the last MIN_PERIOD characters p characters earlier: only
    # where they occur again (rarely, in prose) is a period worth checking, smallest first.
    tail = text[-MIN_PERIOD:]
    lowest = max(0, len(text) - MIN_PERIOD - min(MAX_PERIOD, len(text) // REPEATS))
    at = text.rfind(tail, lowest, len(text) - MIN_PERIOD)
    while at != -1 and len(tail) == MIN_PERIOD:
        period = len(text) - MIN_PERIOD - at
        piece = text[-period:]
        times = repeats_to_stop(piece)
        if (
            period * times <= len(text)
            and any(c.isalpha() for c in piece)
            and text.endswith(piece * times)
        ):
            return piece
        at = text.rfind(tail, lowest, at + MIN_PERIOD - 1)
    return None


class LoopWatch:
    """Fed an answer as it streams; says when it has started to repeat itself."""

    def __init__(self) -> None:
        self._text = ""

    def looping(self, delta: str) -> bool:
        """Add `delta`; True once the answer so far ends in a loop."""
        self._text = (self._text + delta)[-KEPT:]
        return bool(self._text) and repeated_tail(self._text) is not None
