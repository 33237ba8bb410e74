"""The approval modal: what will run, exactly, and why it asks. y / n / a; Escape denies."""

from __future__ import annotations

import json
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from co_tui.orchestrator.frontend import ApprovalDecision, ApprovalRequest

SHELL_ARGS = {"cmd", "command", "script"}


def _arg_renderable(tool_name: str, name: str, value: Any) -> Text | Syntax:
    if isinstance(value, str):
        if name in SHELL_ARGS or "shell" in tool_name:
            return Syntax(value, "bash", theme="ansi_dark", word_wrap=True)
        return Text(value)
    return Text(json.dumps(value, ensure_ascii=False, indent=2, default=str))


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("y", "decide('approve')", "Approve"),
        Binding("n", "decide('deny')", "Deny"),
        Binding("a", "decide('approve_all')", "Approve all (session)"),
        Binding("escape", "decide('deny')", "Deny", show=False),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(classes="approval-screen")
        self.request = request

    def compose(self) -> ComposeResult:
        r = self.request
        title = Text()
        title.append("Approve ", style="bold")
        title.append(r.tool_name, style="bold yellow")
        title.append("?", style="bold")
        if r.total > 1:
            title.append(f"   {r.index} of {r.total}", style="dim")
        with Vertical(id="approval-dialog"):
            yield Static(title, id="approval-title")
            yield Static(Text(f"Why: {r.reason}", style="italic"), id="approval-reason")
            with VerticalScroll(id="approval-args"):
                if not r.args:
                    yield Static(Text("(no arguments)", style="dim"))
                for name, value in r.args.items():
                    yield Static(Text(name, style="bold cyan"), classes="arg-name")
                    yield Static(_arg_renderable(r.tool_name, name, value), classes="arg-value")
            keys = Text()
            for key, label in (("y", "approve"), ("n", "deny"), ("a", "approve all this session")):
                keys.append(f" {key} ", style="reverse bold")
                keys.append(f" {label}   ")
            keys.append(" esc ", style="reverse")
            keys.append(" deny")
            yield Static(keys, id="approval-keys")
        yield Footer()

    def action_decide(self, value: str) -> None:
        self.dismiss(ApprovalDecision(value))
