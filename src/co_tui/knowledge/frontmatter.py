"""YAML frontmatter: split a Markdown document into its metadata and its body, and back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

_OPEN = "---"
_CLOSERS = ("---", "...")


@dataclass
class Document:
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    error: str | None = None  # set when a frontmatter block exists but is not a YAML mapping
    has_frontmatter: bool = False


def parse(text: str) -> Document:
    """Split `text`; a document without a leading `---` block is all body."""
    text = text.removeprefix("\ufeff")
    if not text.startswith(_OPEN):
        return Document(body=text)
    lines = text.split("\n")
    if lines[0].rstrip() != _OPEN:
        return Document(body=text)
    for index in range(1, len(lines)):
        if lines[index].rstrip() in _CLOSERS:
            raw = "\n".join(lines[1:index])
            body = "\n".join(lines[index + 1 :])
            try:
                meta = yaml.safe_load(raw) if raw.strip() else {}
            except yaml.YAMLError as exc:
                reason = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
                return Document(body=body, error=f"invalid YAML frontmatter: {reason}",
                                has_frontmatter=True)  # fmt: skip
            if meta is None:
                meta = {}
            if not isinstance(meta, dict):
                return Document(body=body, error="frontmatter is not a mapping",
                                has_frontmatter=True)  # fmt: skip
            return Document(meta=meta, body=body, has_frontmatter=True)
    return Document(body=text, error="frontmatter block is not closed", has_frontmatter=True)


def render(meta: dict[str, Any], body: str) -> str:
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=None)
    return f"{_OPEN}\n{head}{_OPEN}\n{body.rstrip()}\n"
