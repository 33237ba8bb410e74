"""One line: provider and model, a sandbox warning, sandbox and isolation, yolo, tokens
(turn and session)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual.widgets import Static


@dataclass(frozen=True)
class StatusState:
    model: str = "?"
    sandbox: str = "?"
    isolation: str = "?"
    yolo: bool = False
    turn_tokens: int = 0
    session_tokens: int = 0
    busy: bool = False
    note: str = ""  # e.g. "retry 1 of 2 in 3s"
    mcp: str = ""  # e.g. "MCP 2/3 (failed: broken)"; empty when no server is configured
    warning: str = ""  # the sandbox's own warning (deps.sandbox_warning), shown all session


WARNING_CHARS = 40


def _headline(warning: str) -> str:
    """The start of a warning (its details are in the transcript and /status)."""
    head = warning.split(" (", 1)[0].split(":", 1)[0].strip()
    return head if len(head) <= WARNING_CHARS else head[: WARNING_CHARS - 1] + "…"


class StatusBar(Static):
    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.state = StatusState()

    def set(self, **changes: object) -> None:
        new = replace(self.state, **changes)  # type: ignore[arg-type]
        if new != self.state:
            self.state = new
            self.update(self.render_state())

    def render_state(self) -> Text:
        s = self.state
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
