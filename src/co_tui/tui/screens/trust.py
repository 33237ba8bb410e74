"""The project trust modal: what this project's settings would enable, and the user's call.

Shown at start in a project whose `.co-tui/settings.json` would widen what co-tui may do
(co_tui.trust) and about which the user has not decided for this exact file. It lists every
widening with hidden characters shown as escapes, and decides only on purpose, like the
approval dialog: keys are armed `arm_delay` seconds after it shows, printable keys that
arrive before then go on to the prompt, and every key starts the delay again.

t trusts; n, Enter and Esc do not (the default). Esc works at once: not trusting is safe.
Dismisses with True (trust) or False.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Footer, Static

from co_tui.trust import PROJECT_FILE, ProjectTrust, Widening
from co_tui.tui.screens.approval import ARM_DELAY_S, ApprovalScreen
from co_tui.tui.visible_text import ESCAPE_STYLE, hidden_escapes, visible_text

# Keys that never trust anything work at once: do not trust, scroll, move focus.
_ALWAYS_ACTIVE = {"escape", "tab", "shift+tab", "up", "down", "pageup", "pagedown", "home", "end"}
_SHOWN_ESCAPES = 4


def _key(text: Text, key: str, label: str, *, active: bool) -> None:
    text.append(f" {key} ", style="reverse bold" if active else "reverse dim")
    text.append(f" {label}   ", style="" if active else "dim")


def widening_line(widening: Widening) -> Text:
    """• would <summary>: <detail>, every hidden character shown as an escape."""
    text = Text("• ")
    text.append_text(visible_text(f"would {widening.summary}", keep=""))
    if widening.detail:
        text.append(": ")
        text.append_text(visible_text(widening.detail, keep="", style="bold"))
    return text


class TrustScreen(ModalScreen[bool]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("t", "decide(True)", "Trust"),
        Binding("n", "decide(False)", "Don't trust"),
        Binding("enter", "decide(False)", "Don't trust", show=False),
        Binding("escape", "dont_trust", "Don't trust", show=False),
    ]

    armed: reactive[bool] = reactive(False)

    def __init__(self, project: ProjectTrust, arm_delay: float = ARM_DELAY_S) -> None:
        super().__init__(classes="trust-screen")
        self.project = project
        self.arm_delay = arm_delay
        self._arm_timer: Timer | None = None
        self.keys = Static("", id="trust-keys")  # filled when it arms

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
                    yield Static(self._warning(escapes), id="trust-warning")
            with Vertical(id="trust-foot"):
                note = "Not trusted: just these are ignored; a changed file asks again."
                yield Static(note, id="trust-note")
                yield self.keys
            with VerticalScroll(id="trust-list"):
                for index, line in enumerate(lines):
                    yield Static(line, classes="trust-item", id=f"trust-item-{index}")
        yield Footer()

    @staticmethod
    def _warning(escapes: list[str]) -> Text:
        found = list(dict.fromkeys(escapes))
        text = Text("⚠ these settings contain hidden characters, shown as ", style="bold yellow")
        for escape in found[:_SHOWN_ESCAPES]:
            text.append(escape, style=ESCAPE_STYLE)
            text.append(" ")
        if len(found) > _SHOWN_ESCAPES:
            text.append("…", style="bold yellow")
        return text

    def _key_row(self) -> Text:
        keys = Text()
        _key(keys, "t", "trust", active=self.armed)
        _key(keys, "n", "don't trust", active=self.armed)
        _key(keys, "esc", "don't trust", active=True)
        if self.armed:  # a second line either way, so the dialog does not move when it arms
            keys.append("\nEnter: don't trust · ↑ ↓ PgUp PgDn scroll", "dim")
        else:
            keys.append("\nkeys are not active yet: what you type goes to the prompt", "dim")
        return keys

    # -- arming --
    def on_screen_resume(self) -> None:
        self._disarm()

    def _disarm(self) -> None:
        self.armed = False
        if self._arm_timer is not None:
            self._arm_timer.stop()
        self._arm_timer = self.set_timer(self.arm_delay, self._arm)

    def _arm(self) -> None:
        self.armed = True

    def watch_armed(self) -> None:
        self.keys.update(self._key_row())
        self.set_class(not self.armed, "-disarmed")
        self.refresh_bindings()

    # -- keys --
    def on_key(self, event: events.Key) -> None:
        # Runs before the bindings (they are checked once the key has bubbled to the app).
        if not self.armed and event.key not in _ALWAYS_ACTIVE:
            if event.is_printable and event.character:
                self._hand_over(event.character)
            self._disarm()
            event.stop()
            event.prevent_default()

    def on_paste(self, event: events.Paste) -> None:
        # A paste is never a decision: it was meant for the prompt.
        self._hand_over(event.text)
        event.stop()

    def _hand_over(self, text: str) -> None:
        stack = self.app.screen_stack
        if self in stack and stack.index(self) > 0:
            stack[stack.index(self) - 1].post_message(ApprovalScreen.TypeAhead(text))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "decide" and not self.armed:
            return None  # shown disabled in the footer, and does nothing
        return True

    def action_decide(self, trust: bool) -> None:
        self.dismiss(trust)

    def action_dont_trust(self) -> None:
        self.dismiss(False)
