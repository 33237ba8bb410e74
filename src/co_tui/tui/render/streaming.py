"""Where a stream of Markdown can be cut (its finished blocks and its unfinished tail), and
how often it is shown.

Pure string work, no rendering imports (the app's first frame must not pay for them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

# Commit finished blocks once they hold this many characters; the live tail stays small.
# A longer run of finished blocks (a fast stream between two flushes) is committed in pieces
# of about this size, the event loop served between them: rendering Markdown costs about
# 1 ms per 100 characters on 2 busy cores, and 1.5 KB at once stalled the screen for 20-60
# ms. The tail (up to this size, and the open block) is rendered again at every flush.
COMMIT_CHARS = 300
# The document is updated at most this often, however many deltas arrive...
FLUSH_INTERVAL = 1 / 10
# ...and less often when rendering an update takes more than this share of the time between
# two (a stream of thousands of tokens a second, a slow machine), down to once per
# MAX_FLUSH_INTERVAL: the rest of the event loop goes to the stream and to the keys.
RENDER_SHARE = 0.1
MAX_FLUSH_INTERVAL = 1 / 4
# A single block (a long code fence, a paragraph without blank lines) is split at a line
# boundary once it grows past this, so no block makes the live widget large.
MAX_LIVE_CHARS = 3000


def _fence_marker(line: str) -> str | None:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return None
    for ch in ("`", "~"):
        if stripped.startswith(ch * 3):
            return stripped[: len(stripped) - len(stripped.lstrip(ch))]
    return None


def _closes(fence: str, body: str, marker: str | None) -> bool:
    """Whether the line `body` (its fence marker `marker`) closes the open fence `fence`."""
    return (
        marker is not None
        and marker[0] == fence[0]
        and len(marker) >= len(fence)
        and not body.strip().strip(marker[0])
    )


class _Fence(NamedTuple):
    start: int  # where its opening line starts in the text
    opening: str  # that line
    marker: str  # its ``` or ~~~ (or longer): what closes it


class _Line(NamedTuple):
    end: int  # where the line ends in the text
    ends_block: bool  # a blank line outside a code fence, or the line that closes one
    open_fence: _Fence | None  # the code fence still open after it


def _lines(text: str) -> Iterator[_Line]:
    """The complete lines of `text`: where blocks end, and which code fence is open."""
    fence: _Fence | None = None
    end = 0
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            return  # the last, incomplete line never ends a block
        end += len(line)
        body = line.rstrip("\n")
        marker = _fence_marker(body)
        if fence is None:
            if marker is not None:
                fence = _Fence(end - len(line), line, marker)
            yield _Line(end, fence is None and not body.strip(), fence)
        elif _closes(fence.marker, body, marker):
            fence = None
            yield _Line(end, True, None)
        else:
            yield _Line(end, False, fence)


def split_finished(text: str) -> tuple[str, str, str]:
    """Split streamed Markdown into (finished, reopen, rest).

    `finished` ends at the last block boundary (a blank line, or the end of a closed code
    fence) and can be rendered on its own; `rest` is the unfinished tail. When a single open
    block is longer than MAX_LIVE_CHARS it is cut at a line boundary: an open code fence is
    closed in `finished` and `reopen` holds its opening line, to be put before `rest`.
    """
    boundary = last_line_end = 0
    open_fence: _Fence | None = None
    for line in _lines(text):
        if line.ends_block:
            boundary = line.end
        last_line_end, open_fence = line.end, line.open_fence
    if boundary == 0 and last_line_end > MAX_LIVE_CHARS:
        if open_fence is None:
            return text[:last_line_end], "", text[last_line_end:]
        if last_line_end > open_fence.start + len(open_fence.opening):  # code in it
            marker = open_fence.marker
            finished = text[:last_line_end] + marker[0] * len(marker) + "\n"
            return finished, open_fence.opening, text[last_line_end:]
    return text[:boundary], "", text[boundary:]


def split_blocks(finished: str, size: int = COMMIT_CHARS) -> list[str]:
    """`finished` (whole blocks, as `split_finished` returns them) in pieces that each end
    at a block boundary and hold at least `size` characters (the last may hold fewer), so
    each can be rendered on its own."""
    pieces: list[str] = []
    start = 0
    for line in _lines(finished):
        if line.ends_block and line.end - start >= size:
            pieces.append(finished[start : line.end])
            start = line.end
    if start < len(finished):
        pieces.append(finished[start:])
    return pieces


def flush_interval(render_s: float) -> float:
    """How long to wait after an update whose rendering took `render_s` seconds."""
    return min(MAX_FLUSH_INTERVAL, max(FLUSH_INTERVAL, render_s / RENDER_SHARE))
