"""Text that reaches the terminal from a tool call, a result or a model shows its hidden
characters (co_tui.safety.visible) instead of letting the terminal act on them: Textual passes ESC
through to the terminal, so `\\x1b[2K` in an argument would erase what the user is shown.

Escapes are styled (ESCAPE_STYLE), so a backslash typed literally is told apart from one
that stands for a hidden character. Plain strings (no styling) use co_tui.safety.visible.visible.
"""

from __future__ import annotations

from rich.text import Text

from co_tui.safety.visible import is_plain, visible_segments

ESCAPE_STYLE = "reverse red"


def escaped(text: str, keep: str = "\n") -> tuple[str, list[tuple[int, int]]]:
    """The visible string and the (start, end) offsets of every escape in it."""
    if is_plain(text, keep):
        return text, []
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    offset = 0
    for piece, hidden in visible_segments(text, keep):
        if hidden:
            spans.append((offset, offset + len(piece)))
        pieces.append(piece)
        offset += len(piece)
    return "".join(pieces), spans


def stylize_escapes(text: Text, spans: list[tuple[int, int]]) -> Text:
    for start, end in spans:
        text.stylize(ESCAPE_STYLE, start, end)
    return text


def visible_text(value: str, *, keep: str = "\n", style: str = "") -> Text:
    """A Rich Text of `value` with every hidden character shown as a styled escape."""
    plain, spans = escaped(value, keep)
    return stylize_escapes(Text(plain, style=style), spans)


def one_line(value: str, limit: int, *, style: str = "") -> Text:
    """`value` on one line (newlines shown as ⏎) of at most `limit` cells, escapes styled."""
    # Only the start can show: the first 2 x limit characters fill more than `limit` cells
    # (each takes one or more, but for zero-width ones), so a long value is cut before it
    # is escaped and measured; the whole of it only when that start did not fill the line.
    head = value[: 2 * limit]
    text = visible_text(head.replace("\n", " ⏎ "), keep="", style=style)
    if len(head) < len(value) and text.cell_len <= limit:
        text = visible_text(value.replace("\n", " ⏎ "), keep="", style=style)
    if text.cell_len > limit:
        text.truncate(limit - 1)
        text.append("…", style=style)
    return text


def hidden_escapes(value: str, keep: str = "\n") -> list[str]:
    """The distinct escapes `value` would show, in order of first appearance."""
    found: dict[str, None] = {}
    if not is_plain(value, keep):
        for piece, hidden in visible_segments(value, keep):
            if hidden:
                found.setdefault(piece)
    return list(found)
