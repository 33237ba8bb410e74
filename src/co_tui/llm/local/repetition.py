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


def repeated_tail(text: str) -> str | None:
    """The piece that `text` ends with, repeated REPEATS times in a row (a short piece: as
    often as it takes to fill MIN_RUN characters), or None."""
    last = len(text) - 1
    for period in range(MIN_PERIOD, min(MAX_PERIOD, len(text) // REPEATS) + 1):
        if text[last] != text[last - period]:  # cheap: a loop of this period would match
            continue
        times = max(REPEATS, -(-MIN_RUN // period))
        if period * times > len(text):
            continue
        piece = text[-period:]
        if any(c.isalpha() for c in piece) and text.endswith(piece * times):
            return piece
    return None


class LoopWatch:
    """Fed an answer as it streams; says when it has started to repeat itself."""

    def __init__(self) -> None:
        self._text = ""

    def looping(self, delta: str) -> bool:
        """Add `delta`; True once the answer so far ends in a loop."""
        self._text = (self._text + delta)[-KEPT:]
        return bool(self._text) and repeated_tail(self._text) is not None
