"""What the index needs from one note: its tags (frontmatter and inline `#tags`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from co_tui.knowledge.frontmatter import parse

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
# Obsidian tags: '#' then letters, digits, '_', '-', '/'; at least one non-digit.
_INLINE_TAG = re.compile(r"(?<![\w#/&])#([\w][\w/-]*)")


def normalize_tag(tag: str) -> str:
    return tag.strip().lstrip("#").strip().lower()


def _frontmatter_tags(value: object) -> Iterable[str]:
    if isinstance(value, str):
        return [t for t in re.split(r"[,\s]+", value) if t]
    if isinstance(value, list | tuple):
        return [str(t) for t in value if t is not None]
    return []


def note_tags(text: str) -> list[str]:
    """Sorted, lower-cased, de-duplicated tags of a note."""
    doc = parse(text)
    tags: set[str] = set()
    for key in ("tags", "tag"):
        tags.update(normalize_tag(t) for t in _frontmatter_tags(doc.meta.get(key)))
    body = _INLINE_CODE.sub(" ", _FENCE.sub(" ", doc.body))
    for match in _INLINE_TAG.finditer(body):
        tag = match.group(1).rstrip("/-")
        if tag and not tag.isdigit():
            tags.add(normalize_tag(tag))
    tags.discard("")
    return sorted(tags)


def tag_matches(wanted: str, tags: Iterable[str]) -> bool:
    """`project` matches `project` and nested `project/alpha`."""
    wanted = normalize_tag(wanted)
    return any(t == wanted or t.startswith(f"{wanted}/") for t in tags)
