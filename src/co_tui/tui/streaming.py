"""Where a stream of Markdown can be cut: its finished blocks and its unfinished tail.

Pure string work, no rendering imports (the app's first frame must not pay for them).
"""

from __future__ import annotations

# Commit finished blocks once they hold this many characters; the live tail stays small.
# A longer run of finished blocks (a fast stream between two flushes) is committed in pieces
# of about this size, the event loop served between them: rendering Markdown costs about
# 1 ms per 100 characters on 2 busy cores, and 1.5 KB at once stalled the screen for 20-60
# ms. The tail (up to this size, and the open block) is rendered again at every flush.
COMMIT_CHARS = 300
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


def split_finished(text: str) -> tuple[str, str, str]:
    """Split streamed Markdown into (finished, reopen, rest).

    `finished` ends at the last block boundary (a blank line, or the end of a closed code
    fence) and can be rendered on its own; `rest` is the unfinished tail. When a single open
    block is longer than MAX_LIVE_CHARS it is cut at a line boundary: an open code fence is
    closed in `finished` and `reopen` holds its opening line, to be put before `rest`.
    """
    boundary = 0
    fence: str | None = None
    fence_open_line = ""
    fence_start = 0
    last_line_end = 0
    pos = 0
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # the last, incomplete line never ends a block
        pos += len(line)
        body = line.rstrip("\n")
        marker = _fence_marker(body)
        if fence is None:
            if marker is not None:
                fence, fence_open_line, fence_start = marker, line, pos - len(line)
            elif not body.strip():
                boundary = pos
        elif _closes(fence, body, marker):
            fence = None
            boundary = pos
        last_line_end = pos
    if boundary == 0 and last_line_end > MAX_LIVE_CHARS:
        if fence is not None and last_line_end > fence_start + len(fence_open_line):
            closing = fence[0] * len(fence)
            finished = text[:last_line_end] + closing + "\n"
            return finished, fence_open_line, text[last_line_end:]
        if fence is None:
            return text[:last_line_end], "", text[last_line_end:]
    return text[:boundary], "", text[boundary:]


def split_blocks(finished: str, size: int = COMMIT_CHARS) -> list[str]:
    """`finished` (whole blocks, as `split_finished` returns them) in pieces that each end
    at a block boundary and hold at least `size` characters (the last may hold fewer), so
    each can be rendered on its own."""
    pieces: list[str] = []
    start = pos = 0
    fence: str | None = None
    for line in finished.splitlines(keepends=True):
        pos += len(line)
        body = line.rstrip("\n")
        marker = _fence_marker(body)
        if fence is None and marker is not None:
            fence = marker
            continue
        if fence is None:
            at_boundary = not body.strip()
        else:
            at_boundary = _closes(fence, body, marker)
            if at_boundary:
                fence = None
        if at_boundary and pos - start >= size:
            pieces.append(finished[start:pos])
            start = pos
    if start < len(finished):
        pieces.append(finished[start:])
    return pieces
