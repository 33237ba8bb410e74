"""Make hidden characters visible: what a user approves must look exactly like what runs.

Control characters (C0 but newline, DEL, C1), ESC-led terminal sequences, bidi overrides and
isolates, zero-width and other invisible format characters are replaced by a printable
escape (`\\x1b`, `\\u202e`, `\\t`). Newlines stay, so multi-line values keep their lines.
`json_text` is the same for a line of JSON: those characters become `\\uXXXX` escapes, so it
decodes to exactly the strings it was made from. `visible_line` is the same on one line;
`safe_line` a notification's text: one line, escaped, cut short.

Text without a hidden character (nearly all of it) costs one `str.isprintable` pass, at C
speed; otherwise only the characters outside printable ASCII are looked at one by one.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator

LINE_LIMIT = 160  # a notification's body
TITLE_LIMIT = 40  # and its title

_NAMED = {"\t": "\\t", "\r": "\\r", "\x1b": "\\x1b", "\x00": "\\x00"}
_NOT_PRINTABLE_ASCII = re.compile(r"[^ -~]")  # the only characters that can be hidden


def is_hidden(char: str, keep: str = "\n") -> bool:
    """True for a character that a terminal would not show as itself (`keep`: shown as is)."""
    if char in keep:
        return False
    category = unicodedata.category(char)
    # Cc: controls (C0, DEL, C1); Cf: format (bidi, zero-width, BOM, soft hyphen…);
    # Zl/Zp: line/paragraph separators; Co/Cs/Cn: private, surrogate, unassigned.
    return category in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn")


def is_plain(text: str, keep: str = "\n") -> bool:
    """A quick True for text without a hidden character: `str.isprintable` rejects every
    one (and non-ASCII spaces, which are not hidden: False then means "look closer")."""
    if text.isprintable():
        return True
    for char in keep:
        text = text.replace(char, "")
    return text.isprintable()


def escape_char(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible_segments(text: str, keep: str = "\n") -> Iterator[tuple[str, bool]]:
    """(piece, was_hidden) in order: plain runs as they are, each hidden char escaped.
    (Callers check `is_plain` first: plain text is one piece.)"""
    start = 0
    for match in _NOT_PRINTABLE_ASCII.finditer(text):
        index = match.start()
        char = text[index]
        if is_hidden(char, keep):
            if index > start:
                yield text[start:index], False
            yield escape_char(char), True
            start = index + 1
    if start < len(text):
        yield text[start:], False


def visible(text: str, keep: str = "\n") -> str:
    """`text` with every hidden character replaced by its printable escape. Command output
    passes keep="\n\t" (tabs are layout there); arguments to approve keep only newlines."""
    if is_plain(text, keep):
        return text
    return "".join(piece for piece, _ in visible_segments(text, keep))


def _json_escape(char: str) -> str:
    """`char` as a JSON string escape: `\\uXXXX`, a surrogate pair above U+FFFF."""
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(value: object) -> str:
    """`value` as one line of JSON, non-ASCII text readable, every hidden character escaped
    (`json.dumps` leaves DEL, C1, bidi and U+2028 raw even though they act on a terminal);
    what JSON cannot encode is written as its `str`."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if text.isprintable():  # the usual case: json.dumps escaped C0 (`\\n`, `\\u001b`) itself
        return text
    # Outside its strings the line is printable ASCII: every hidden character is inside one.
    return _NOT_PRINTABLE_ASCII.sub(
        lambda match: _json_escape(match[0]) if is_hidden(match[0], keep="") else match[0], text
    )


# Terminal sequences as a whole: CSI (ESC [ or C1 CSI … final byte), OSC/DCS/APC/PM/SOS
# strings up to BEL or ST, and two-character ESC sequences.
_TERMINAL_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)


def plain_words(text: str, limit: int = 500) -> str:
    """What a person typed, as plain words on one line: terminal sequences and every other
    hidden character removed (not escaped: these are words to quote, not a call to
    approve), runs of white space made one space, cut to `limit` characters."""
    text = _TERMINAL_SEQUENCE.sub("", text)
    if not is_plain(text, keep=""):
        text = "".join(
            " " if c.isspace() else c for c in text if c.isspace() or not is_hidden(c, keep="")
        )
    words = " ".join(text.split())
    return words if len(words) <= limit else words[: limit - 1] + "…"


def visible_line(text: str) -> str:
    """`text` on one line (newlines and runs of white space: one space), every hidden
    character shown as its escape."""
    return visible(" ".join(text.split()), keep="")


def safe_line(text: str, limit: int = LINE_LIMIT) -> str:
    """`text` on one line of at most `limit` characters, nothing a terminal would act on;
    ';' is left out (OSC 777 separates its fields with it)."""
    shown = visible_line(text).replace(";", ",")
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
