"""Check a note name the model gave before it is looked up in the vault.

Refused: empty names, NUL and other control or format characters (bidi overrides,
zero-width marks), absolute paths, drive letters and backslashes, and `..` segments. The
name is then opened with co_tui.safety.safe_read, which follows no symbolic link, so whatever
the vault holds (a link, a folder swapped for a link mid-read) nothing outside it is read.
"""

from __future__ import annotations

import unicodedata
from pathlib import PurePosixPath

# Unicode categories never legitimate in a note name: controls, format chars (bidi,
# zero-width), surrogates, private use, line/paragraph separators, unassigned.
_BAD_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
MAX_NAME_LENGTH = 1024


class UnsafePathError(ValueError):
    """The name cannot be used; the message says why (safe to show the model)."""


def clean_name(name: str) -> str:
    """Validate and NFC-normalise a vault-relative name; raises UnsafePathError."""
    if not isinstance(name, str) or not name.strip():
        raise UnsafePathError("the note name is empty")
    if len(name) > MAX_NAME_LENGTH:
        raise UnsafePathError("the note name is too long")
    name = unicodedata.normalize("NFC", name.strip())
    if any(unicodedata.category(ch) in _BAD_CATEGORIES for ch in name):
        raise UnsafePathError("the note name contains control or invisible characters")
    if "\\" in name or (len(name) > 1 and name[1] == ":"):
        raise UnsafePathError("use forward slashes and a path relative to the vault")
    pure = PurePosixPath(name)
    if pure.is_absolute() or name.startswith("~"):
        raise UnsafePathError("absolute paths are not allowed: give a path relative to the vault")
    if any(part == ".." for part in pure.parts):
        raise UnsafePathError("'..' is not allowed: the path must stay inside the vault")
    return name
