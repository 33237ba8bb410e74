"""Private text in an outbound call's arguments, in the encodings it may travel in.

`find_carried(args, private, typed)` finds every maximal run of at least MIN_RUN characters
of an argument value that occurs in the text of a private source (origins.py) and is not
inside what the user typed. Each value is searched as sent and as it decodes: percent-
encoded, base64 (standard or URL-safe), hex, and any of those once more inside another;
everything is compared case-folded. A run needs MIN_ALNUM letters or digits: "https://" is
in many notes and in every URL.

The search is bounded (MAX_VALUE_CHARS of a value, MAX_SOURCE_CHARS of a source, the newest
sources first up to MAX_TOTAL_CHARS): what lies beyond is not searched.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from co_tui.context.origins import Source

MIN_RUN = 8  # shortest run of an argument worth reporting
MIN_ALNUM = 6  # letters or digits a run must hold
MAX_VALUE_CHARS = 20_000  # of one argument value searched
MAX_SOURCE_CHARS = 200_000  # of one source's text searched
MAX_TOTAL_CHARS = 1_000_000  # of all sources' text searched (the newest first)
MAX_CARRIED = 50
_FIND_LIMIT = 256  # distinct n-grams up to which a C-speed `in` per gram beats a scan
_VERIFY_BUDGET = 2_000  # substring checks spent splitting runs that are not contiguous
_BASE64 = re.compile(r"[A-Za-z0-9+/]{12,}={0,2}|[A-Za-z0-9_-]{12,}")
_HEX = re.compile(r"[0-9a-fA-F]{12,}")


@dataclass(frozen=True)
class Carried:
    """A part of an argument found in a private source."""

    text: str  # as found: decoded and case-folded
    label: str  # the source it is in
    argument: str  # the argument's name
    encoding: str = ""  # "", "percent-encoded", "base64", "hex" (and "base64 in hex"…)

    def line(self) -> str:
        """'`codeword` from your knowledge file me.md (base64, in url)'."""
        how = ", ".join(w for w in (self.encoding, f"in {self.argument}") if w)
        return f"`{self.text}` from {self.label} ({how})"


# -- runs of one text found in another ------------------------------------------------------


def _gram_hits(value: str, text: str, k: int) -> list[int]:
    """Sorted positions i where value[i:i+k] occurs in text."""
    positions: dict[str, list[int]] = {}
    for i in range(len(value) - k + 1):
        positions.setdefault(value[i : i + k], []).append(i)
    hits: list[int] = []
    if len(positions) <= _FIND_LIMIT:
        for gram, where in positions.items():
            if gram in text:
                hits.extend(where)
    else:  # many grams: one pass over the text beats a search per gram
        for j in range(len(text) - k + 1):
            found = positions.pop(text[j : j + k], None)
            if found is not None:
                hits.extend(found)
                if not positions:
                    break
    return sorted(hits)


def _segments(hits: list[int], k: int) -> Iterator[tuple[int, int]]:
    """Runs of consecutive hit positions as (start, end) spans of the value."""
    start = prev = None
    for i in hits:
        if start is None or prev is None or i != prev + 1:
            if start is not None and prev is not None:
                yield start, prev + k
            start = i
        prev = i
    if start is not None and prev is not None:
        yield start, prev + k


def _maximal_runs(
    value: str, text: str, start: int, end: int, k: int, budget: list[int]
) -> list[str]:
    """The maximal runs inside value[start:end] (every k-gram of which is in `text`)."""
    whole = value[start:end]
    if whole in text:
        return [whole]
    runs: list[str] = []
    last_end = start
    for s in range(start, end - k + 1):
        if budget[0] <= 0:  # out of checks: the rest as one approximate run
            if end > last_end:
                runs.append(value[max(s, last_end - k + 1) : end])
            break
        lo, hi = s + k, end  # value[s:lo] is in text; find the longest
        while lo < hi:
            mid = (lo + hi + 1) // 2
            budget[0] -= 1
            if value[s:mid] in text:
                lo = mid
            else:
                hi = mid - 1
        if lo > last_end:
            runs.append(value[s:lo])
            last_end = lo
        if lo == end:
            break
    return runs


def overlaps(value: str, text: str, min_run: int = MIN_RUN) -> list[str]:
    """Every maximal run of at least `min_run` characters of `value` that occurs in `text`."""
    if len(value) < min_run or len(text) < min_run:
        return []
    budget = [_VERIFY_BUDGET]
    runs: list[str] = []
    for start, end in _segments(_gram_hits(value, text, min_run), min_run):
        runs.extend(_maximal_runs(value, text, start, end, min_run, budget))
    return runs


# -- the forms an argument may take ----------------------------------------------------------


_NOT_SHOWN = re.compile(r"[^\S ]|[\x00-\x1f\x7f-\x9f\ufffd]")


def _readable(data: bytes) -> str | None:
    """What of `data` reads as text: UTF-8, anything unprintable turned into NUL (so no run
    crosses it); None when no run of MIN_RUN characters is left."""
    text = _NOT_SHOWN.sub("\0", data.decode("utf-8", errors="replace"))
    if not any(len(run) >= MIN_RUN for run in text.split("\0")):
        return None
    return text


def _b64(segment: str) -> Iterator[str]:
    """The readable text of a base64 run, at each of its four alignments (a run may start
    with other letters: `collect` then the encoded text)."""
    altchars = b"-_" if "-" in segment or "_" in segment else None
    for start in range(4):
        part = segment[start:].rstrip("=")
        part += "=" * (-len(part) % 4)
        try:
            data = base64.b64decode(part, altchars=altchars, validate=True)
        except (binascii.Error, ValueError):
            continue
        text = _readable(data)
        if text is not None:
            yield text


def _hex(segment: str) -> Iterator[str]:
    for start in range(2):
        part = segment[start : len(segment) - (len(segment) - start) % 2]
        text = _readable(bytes.fromhex(part))
        if text is not None:
            yield text


def _decodings(value: str) -> Iterator[tuple[str, str]]:
    """(encoding, text) of what `value` decodes to, one step."""
    if "%" in value or "+" in value:
        decoded = unquote_plus(value)
        if decoded != value:
            yield "percent-encoded", decoded
    for match in _HEX.finditer(value):
        yield from (("hex", text) for text in _hex(match.group()))
    for match in _BASE64.finditer(value):
        yield from (("base64", text) for text in _b64(match.group()))


def forms(value: str, depth: int = 2) -> Iterator[tuple[str, str]]:
    """(encoding, text) of `value` as sent ("") and as it decodes, `depth` steps deep."""
    yield "", value
    if depth == 0:
        return
    for encoding, text in _decodings(value):
        for inner, deeper in forms(text, depth - 1):
            yield (f"{inner} in {encoding}" if inner else encoding), deeper


def _arguments(value: Any, name: str = "") -> Iterator[tuple[str, str]]:
    """(argument name, string) for every string in the arguments, nested ones included."""
    if isinstance(value, str):
        yield name, value[:MAX_VALUE_CHARS]
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _arguments(item, f"{name}.{key}" if name else str(key))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _arguments(item, name)


# -- the search ------------------------------------------------------------------------------


def _searched(private: Sequence[Source]) -> list[tuple[str, str]]:
    """(label, case-folded text) of the sources searched, the newest first, within budget."""
    searched: list[tuple[str, str]] = []
    total = 0
    for source in reversed(private):
        text = source.text[:MAX_SOURCE_CHARS].casefold()
        text = text[: max(0, MAX_TOTAL_CHARS - total)]
        if len(text) >= MIN_RUN:
            searched.append((source.label, text))
            total += len(text)
        if total >= MAX_TOTAL_CHARS:
            break
    return searched


def _as_written(run: str, text: str, folded: str) -> str:
    """The run as the argument has it (its case), where folding kept every position."""
    at = folded.find(run)
    return text[at : at + len(run)] if len(folded) == len(text) and at >= 0 else run


def _worth_reporting(run: str) -> bool:
    return sum(c.isalnum() for c in run) >= MIN_ALNUM


def find_carried(
    args: Mapping[str, Any], private: Sequence[Source], typed: Sequence[str] = ()
) -> tuple[Carried, ...]:
    """The private text the arguments carry that the user did not type (see the module),
    the longest first, none inside another."""
    sources = _searched(private)
    if not sources:
        return ()
    mine = "\n".join(typed).casefold()
    found: dict[str, Carried] = {}  # by the run case-folded
    for argument, value in _arguments(dict(args)):
        for encoding, text in forms(value):
            folded = text.casefold()
            for label, source in sources:
                for run in overlaps(folded, source):
                    if _worth_reporting(run) and run not in mine and run not in found:
                        found[run] = Carried(
                            _as_written(run, text, folded), label, argument, encoding
                        )
    kept: list[str] = []
    for run in sorted(found, key=lambda r: (-len(r), r)):
        if not any(run in longer for longer in kept):
            kept.append(run)
        if len(kept) >= MAX_CARRIED:
            break
    return tuple(found[run] for run in kept)
