"""The cheap Rich renderable that finished transcript text becomes."""

from __future__ import annotations

from typing import ClassVar

from rich.console import JustifyMethod
from rich.markdown import Heading, Markdown

from co_tui.visible import visible


class _LeftHeading(Heading):
    LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = dict.fromkeys(
        ("h1", "h2", "h3", "h4", "h5", "h6"), "left"
    )


class TranscriptMarkdown(Markdown):
    """Rich Markdown with left-aligned headings (a centred h1 looks lost in a chat)."""

    elements: ClassVar = {**Markdown.elements, "heading_open": _LeftHeading}

    def __init__(self, text: str) -> None:
        # Model output can carry escape sequences (from a web page, a file): shown, not run.
        super().__init__(visible(text, keep="\n\t"), code_theme="monokai", hyperlinks=True)
