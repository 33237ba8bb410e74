"""A small model caught in a loop: the same sentence or lines over and over until the token
cap (SmolLM2 after a denied call wrote "The user denied this action." a hundred times, 25 s
of a frozen-looking stream). The embedded model's answer stops once its end is one piece of
text repeated REPEATS times in a row; the repeats already shown stay.

In an answer, only a piece with a letter in it counts, and the repeated run must be at least
MIN_RUN characters: a rule of dashes or a table's separator never ends an answer, nor does a
short phrase said a few times. In a tool's arguments (JSON the engine holds to the tool's
schema) any piece counts: SmolLM2 wrote file ids such as "7XyZ.json.json.json…" and thread
stamps such as "10.1.1.1.1…" until the token cap, 3 to 4 s of a request whose JSON could not
be finished anyway."""

from __future__ import annotations

REPEATS = 4
MIN_PERIOD = 8
MAX_PERIOD = 400
MIN_RUN = 120
KEPT = MAX_PERIOD * REPEATS  # the most of the answer a check needs


def repeats_to_stop(piece: str) -> int:
    """How many times in a row `piece` must end an answer before the answer is a loop."""
    return max(REPEATS, -(-MIN_RUN // len(piece)))


def repeated_tail(text: str, *, letters_only: bool = True) -> str | None:
    """The piece that `text` ends with, repeated REPEATS times in a row (a short piece: as
    often as it takes to fill MIN_RUN characters), or None. With `letters_only`, a piece
    without a letter is never a loop."""
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
            and (not letters_only or any(c.isalpha() for c in piece))
            and text.endswith(piece * times)
        ):
            return piece
        at = text.rfind(tail, lowest, at + MIN_PERIOD - 1)
    return None


def one_pass(text: str, *, letters_only: bool = True) -> str | None:
    """`text` up to the end of the loop's first pass, or None when `text` does not end in a
    loop. Where the text before the loop ends like the loop ("plan" + ".json" repeated), the
    pass could end at any character of the piece; it ends before a space where it can ("is
    due." of "… is due. Please …"), else before a character that is not a letter or digit
    ("plan.json", not "plan.jso")."""
    piece = repeated_tail(text, letters_only=letters_only)
    if piece is None:
        return None
    period = next(
        p
        for p in range(1, len(piece) + 1)
        if len(piece) % p == 0 and piece[:p] * (len(piece) // p) == piece
    )
    start = len(text) - period
    while start > 0 and text[start - 1] == text[start - 1 + period]:
        start -= 1
    ends = range(start + period, min(start + 2 * period, len(text)))
    before_space = next((i for i in ends if text[i].isspace()), None)
    before_mark = next((i for i in ends if not text[i].isalnum()), start + period)
    return text[: before_space if before_space is not None else before_mark]


class LoopWatch:
    """Fed an answer (or, with `letters_only=False`, a tool's arguments) as it streams; says
    when it has started to repeat itself."""

    def __init__(self, *, letters_only: bool = True) -> None:
        self._text = ""
        self._letters_only = letters_only

    def looping(self, delta: str) -> bool:
        """Add `delta`; True once the answer so far ends in a loop."""
        self._text = (self._text + delta)[-KEPT:]
        return bool(self._text) and (
            repeated_tail(self._text, letters_only=self._letters_only) is not None
        )
