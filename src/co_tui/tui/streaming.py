"""Where a stream of Markdown can be cut: its finished blocks and its unfinished tail.

Pure string work, no rendering imports (the app's first frame must not pay for them).
"""

from __future__ import annotations

# Commit finished blocks once they hold this many characters; the live tail stays small.
COMMIT_CHARS = 600
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
        elif (
            marker is not None
            and marker[0] == fence[0]
            and len(marker) >= len(fence)
            and not body.strip().strip(marker[0])
        ):
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
