"""One line: provider and model, a sandbox warning, sandbox and isolation, yolo, tokens
(turn and session), MCP servers, whether a turn runs, a passing note.

Every field is a reactive; the chat screen binds them to its own (`data_bind`), so the bar
follows the session without anyone calling it.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

WARNING_CHARS = 40


def _headline(warning: str) -> str:
    """The start of a warning (its details are in the transcript and /status)."""
    head = warning.split(" (", 1)[0].split(":", 1)[0].strip()
    return head if len(head) <= WARNING_CHARS else head[: WARNING_CHARS - 1] + "…"


class StatusBar(Static):
    model = reactive("?")
    sandbox = reactive("?")
    isolation = reactive("?")
    yolo = reactive(False)
    turn_tokens = reactive(0)
    session_tokens = reactive(0)
    busy = reactive(False)
    note = reactive("")  # e.g. "retrying in 3s"
    mcp = reactive("")  # e.g. "MCP 2/3 (failed: broken)"; empty when no server is configured
    warning = reactive("")  # the sandbox's or the project's warning, shown all session

    def render(self) -> Text:
        s = self
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f" {s.model} ", style="bold")
        text.append("│ ", style="dim")
        if s.warning:  # first after the model, so a narrow terminal does not cut it off
            text.append(f"⚠ {_headline(s.warning)}", style="bold red")
            text.append(" │ ", style="dim")
        iso_style = "yellow" if s.isolation == "none" else "green"
        text.append(f"sandbox {s.sandbox} ")
        text.append(f"({s.isolation})", style=iso_style)
        text.append(" │ ", style="dim")
        text.append("yolo ON" if s.yolo else "yolo off", style="bold red" if s.yolo else "dim")
        text.append(" │ ", style="dim")
        text.append(f"turn {s.turn_tokens:,} tok · session {s.session_tokens:,} tok")
        if s.mcp:
            text.append(" │ ", style="dim")
            text.append(s.mcp, style="yellow" if "failed" in s.mcp else "")
        if s.busy:
            text.append(" │ ", style="dim")
            text.append("working… (Esc to cancel)", style="italic")
        if s.note:
            text.append(" │ ", style="dim")
            text.append(s.note, style="yellow")
        return text
