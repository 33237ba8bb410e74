"""Resolve a note name the model gave into a path that is certainly inside the vault.

Refused: empty names, NUL and other control or format characters (bidi overrides,
zero-width marks), absolute paths, drive letters and backslashes, `..` segments, and
anything whose resolved path (after following symlinks) lies outside the vault.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path, PurePosixPath

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


def inside(vault: Path, path: Path) -> bool:
    """True when `path`, with every symlink followed, is inside the (resolved) vault."""
    try:
        return path.resolve().is_relative_to(vault.resolve())
    except (OSError, RuntimeError):  # RuntimeError: symlink loop
        return False


def resolve_note(vault: Path, name: str) -> Path:
    """The resolved path of note `name` inside `vault`; it may not exist yet."""
    name = clean_name(name)
    root = vault.resolve()
    candidate = root / name
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:
        raise UnsafePathError("the path cannot be resolved") from exc
    if not resolved.is_relative_to(root) or resolved == root:
        raise UnsafePathError("access denied: the path is outside the vault")
    return resolved
