"""The project trust modal: what this project's settings would enable, and the user's call.

Shown at start in a project whose `.co-tui/settings.json` would widen what co-tui may do
(co_tui.trust) and about which the user has not decided for this exact file. It lists every
widening with hidden characters shown as escapes, and decides only on purpose, like the
approval dialog (ArmedModal): keys are armed `arm_delay` seconds after it shows, printable
keys that arrive before then go on to the prompt, and every key starts the delay again.

t trusts; n, Enter and Esc do not (the default). Esc works at once: not trusting is safe.
Dismisses with True (trust) or False.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from co_tui.trust import PROJECT_FILE, ProjectTrust
from co_tui.trust.widening import Widening
from co_tui.tui.screens.armed import ARM_DELAY_S, ArmedModal, hidden_warning, key_label
from co_tui.tui.visible_text import hidden_escapes, visible_text
from co_tui.tui.widgets.keys_footer import KeysFooter


def widening_line(widening: Widening) -> Text:
    """• would <summary>: <detail>, every hidden character shown as an escape."""
    text = Text("• ")
    text.append_text(visible_text(f"would {widening.summary}", keep=""))
    if widening.detail:
        text.append(": ")
        text.append_text(visible_text(widening.detail, keep="", style="bold"))
    return text


class TrustScreen(ArmedModal[bool]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("t", "decide(True)", "Trust"),
        Binding("n", "decide(False)", "Don't trust"),
        Binding("enter", "decide(False)", "Don't trust", show=False),
        Binding("escape", "dont_trust", "Don't trust", show=False),
    ]

    def __init__(self, project: ProjectTrust, arm_delay: float = ARM_DELAY_S) -> None:
        super().__init__(keys_id="trust-keys", arm_delay=arm_delay, classes="trust-screen")
        self.project = project

    def compose(self) -> ComposeResult:
        project = self.project
        lines = [widening_line(w) for w in project.widenings]
        with Vertical(id="trust-dialog"):
            with Vertical(id="trust-head"):
                yield Static(Text("Trust this project?", style="bold"), id="trust-title")
                yield Static(visible_text(str(project.root), keep="", style="dim"))
                intro = f"Its {PROJECT_FILE} would, beyond your own settings:"
                yield Static(intro, id="trust-intro")
                escapes = [e for w in project.widenings for e in hidden_escapes(w.line(), "")]
                if escapes:
                    warning = hidden_warning("these settings contain", escapes)
                    yield Static(warning, id="trust-warning")
            with Vertical(id="trust-foot"):
                note = "Not trusted: just these are ignored; a changed file asks again."
                yield Static(note, id="trust-note")
                yield self.keys
            with VerticalScroll(id="trust-list"):
                for index, line in enumerate(lines):
                    yield Static(line, classes="trust-item", id=f"trust-item-{index}")
        yield KeysFooter()

    def _key_row(self) -> Text:
        keys = Text()
        key_label(keys, "t", "trust", active=self.armed)
        key_label(keys, "n", "don't trust", active=self.armed)
        key_label(keys, "esc", "don't trust", active=True)
        if self.armed:  # a second line either way, so the dialog does not move when it arms
            keys.append("\nEnter: don't trust · ↑ ↓ PgUp PgDn scroll", "dim")
        else:
            keys.append("\nkeys are not active yet: what you type goes to the prompt", "dim")
        return keys

    def action_decide(self, trust: bool) -> None:
        self.dismiss(trust)

    def action_dont_trust(self) -> None:
        self.dismiss(False)
