"""How a tool call's status looks, in the transcript and in the sidebar."""

from __future__ import annotations

# "waiting for approval": the call waits for the user's decision (sidebar only).
WAITING = "waiting for approval"
GLYPHS = {WAITING: "◆", "running": "●", "ok": "✓", "failed": "✗", "denied": "⊘", "interrupted": "◌"}
STYLES = {
    WAITING: "bold yellow",
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
