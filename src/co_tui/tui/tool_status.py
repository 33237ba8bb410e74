"""How a tool call's status looks, in the transcript and in the sidebar."""

from __future__ import annotations

GLYPHS = {"running": "●", "ok": "✓", "failed": "✗", "denied": "⊘", "interrupted": "◌"}
STYLES = {
    "running": "yellow",
    "ok": "green",
    "failed": "red",
    "denied": "magenta",
    "interrupted": "bright_black",
}


def glyph(status: str) -> str:
    return GLYPHS.get(status, "?")


def style(status: str) -> str:
    return STYLES.get(status, "")
