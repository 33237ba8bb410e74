"""The project trust modal: what this project would change, the text it would load, and the
user's call.

Shown at start (and on /trust) in a project that ships files for co-tui (co_tui.config.trust)
about which the user has not decided for these exact files. It lists what waits for trust
(settings, commands, skills), then the text of every instruction, knowledge, command and
skill file exactly as it would load (the bytes read for this decision), all scrollable, with
hidden characters shown as escapes. It decides only on purpose, like the approval dialog
(ArmedModal): keys are armed `arm_delay` seconds after it shows, printable keys that arrive
before then go on to the prompt, and every key starts the delay again.

t trusts; n, Enter and Esc do not (the default). Esc works at once: not trusting is safe.
Dismisses with True (trust) or False.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from co_tui.config.trust import ProjectTrust
from co_tui.config.trust.project_files import COMMANDS, INSTRUCTIONS, KNOWLEDGE, SKILLS
from co_tui.config.trust.widening import Widening
from co_tui.tui.render.visible_text import hidden_escapes, visible_text
from co_tui.tui.screens.armed import (
    UNARMED_HINT,
    ArmedModal,
    hidden_warning,
    key_label,
)
from co_tui.tui.widgets.keys_footer import KeysFooter


def widening_line(widening: Widening) -> Text:
    """• would <summary>: <detail>, every hidden character shown as an escape."""
    text = Text("• ")
    text.append_text(visible_text(f"would {widening.summary}", keep=""))
    if widening.detail:
        text.append(": ")
        text.append_text(visible_text(widening.detail, keep="", style="bold"))
    return text


def shown_files(project: ProjectTrust) -> list[str]:
    """The project's text files the dialog shows, in the order they would load."""
    files = project.files.files
    knowledge = sorted(r for r in files if r.startswith(f"{KNOWLEDGE}/"))
    commands = sorted(r for r in files if r.startswith(f"{COMMANDS}/"))
    skills = sorted((r for r in files if r.startswith(f"{SKILLS}/")), key=lambda r: r.split("/"))
    return [*knowledge, *(r for r in INSTRUCTIONS if r in files), *commands, *skills]


def file_text(project: ProjectTrust, relative: str) -> Text:
    """A file's name, then its text as it would load, hidden characters as escapes."""
    text = Text(f"── {relative} ", style="bold")
    if relative in project.files.truncated:
        text.append("(its first part: the rest is never read)", style="dim")
    text.append("\n")
    shown = (project.files.text(relative) or "").rstrip("\n")  # no blank rows below it
    text.append_text(visible_text(shown, keep="\n\t"))
    return text


class TrustScreen(ArmedModal[bool]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("t", "decide(True)", "Trust"),
        Binding("n", "decide(False)", "Don't trust"),
        Binding("enter", "decide(False)", "Don't trust", show=False),
        Binding("escape", "dont_trust", "Don't trust", show=False),
    ]

    def __init__(self, project: ProjectTrust, arm_delay: float | None = None) -> None:
        super().__init__(keys_id="trust-keys", arm_delay=arm_delay, classes="trust-screen")
        self.project = project

    def compose(self) -> ComposeResult:
        project = self.project
        lines = [widening_line(w) for w in project.widenings]
        files = shown_files(project)
        with Vertical(id="trust-dialog"):
            with Vertical(id="trust-head"):
                yield Static(Text("Trust this project?", style="bold"), id="trust-title")
                yield Static(visible_text(str(project.root), keep="", style="dim"))
                yield Static(self._intro(files), id="trust-intro")
                escapes = [e for w in project.widenings for e in hidden_escapes(w.line(), "")]
                for relative in files:
                    escapes += hidden_escapes(project.files.text(relative) or "", "\n\t")
                if escapes:
                    warning = hidden_warning("these files contain", escapes)
                    yield Static(warning, id="trust-warning")
            with Vertical(id="trust-foot"):
                texts = (
                    "; its instructions are read as untrusted text"
                    if project.untrusted_texts
                    else ""
                )
                note = f"Not trusted: what it would change waits{texts}. A changed file asks again."
                yield Static(note, id="trust-note")
                yield self.keys
            with VerticalScroll(id="trust-list"):
                for index, line in enumerate(lines):
                    yield Static(line, classes="trust-item", id=f"trust-item-{index}")
                for index, relative in enumerate(files):
                    text = file_text(project, relative)
                    yield Static(text, classes="trust-file", id=f"trust-file-{index}")
        yield KeysFooter()

    def _intro(self, files: list[str]) -> str:
        if self.project.widenings and files:
            return "Beyond your own settings it would, and it ships this text for the model:"
        if self.project.widenings:
            return "Beyond your own settings it would:"
        return "It ships this text for the model:"

    def _key_row(self) -> Text:
        keys = Text()
        key_label(keys, "t", "trust", active=self.armed)
        key_label(keys, "n", "don't trust", active=self.armed)
        key_label(keys, "esc", "don't trust", active=True)
        if self.armed:  # a second line either way, so the dialog does not move when it arms
            enter = "Enter: don't trust"
            keys.append(f"\n{self.armed_line(f'{enter} · ↑ ↓ PgUp PgDn scroll', enter)}", "dim")
        else:
            keys.append(f"\n{UNARMED_HINT}", "dim")
        return keys

    def action_decide(self, trust: bool) -> None:
        self.dismiss(trust)

    def action_dont_trust(self) -> None:
        self.dismiss(False)
