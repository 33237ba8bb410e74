"""The approval modal: what will run, exactly, and why it asks. It decides only on purpose.

- Keys decide nothing until the dialog is armed, `arm_delay` seconds after it shows: it can
  open under the fingers of someone typing the next message. Printable keys that arrive
  before then go on to the screen underneath (the prompt) as `TypeAhead`, and every such key
  starts the delay again, so a user who keeps typing never decides anything by accident.
- `a` (approve every call for the rest of the session) asks once more.
- Arguments show their hidden characters (escape sequences, bidi, zero-width) as escapes, and
  a warning line says when there are any; the whole value scrolls, the key row stays.

y approves, n and Esc deny, Ctrl+C cancels the turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Footer, Static

from co_tui.orchestrator.frontend import ApprovalDecision, ApprovalRequest
from co_tui.tui.visible_text import ESCAPE_STYLE, visible_text
from co_tui.tui.widgets.args_view import ArgsView

ARM_DELAY_S = 0.6
# Keys that never approve anything work at once: deny, cancel the turn, scroll, move focus.
_ALWAYS_ACTIVE = {"escape", "ctrl+c", "tab", "shift+tab"}
_ALWAYS_ACTIVE |= {"up", "down", "pageup", "pagedown", "home", "end"}
_SHOWN_ESCAPES = 4


def _key(text: Text, key: str, label: str, *, active: bool) -> None:
    text.append(f" {key} ", style="reverse bold" if active else "reverse dim")
    text.append(f" {label}   ", style="" if active else "dim")


class ApprovalScreen(ModalScreen[ApprovalDecision | None]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("y", "decide('approve')", "Approve"),
        Binding("n", "decide('deny')", "Deny"),
        Binding("a", "approve_all", "Approve all (session)"),
        Binding("escape", "deny", "Deny", show=False),
        Binding("ctrl+c", "app.cancel_turn", "Cancel turn", show=False),
    ]

    armed: reactive[bool] = reactive(False)
    confirming_all: reactive[bool] = reactive(False)

    @dataclass
    class TypeAhead(Message):
        """Text typed for the prompt that reached the dialog before it was armed."""

        text: str

    def __init__(self, request: ApprovalRequest, arm_delay: float = ARM_DELAY_S) -> None:
        super().__init__(classes="approval-screen")
        self.request = request
        self.arm_delay = arm_delay
        self._arm_timer: Timer | None = None
        self.args_view = ArgsView(request.tool_name, request.args, id="approval-args")
        self.more = Static("", id="approval-more")
        self.keys = Static("", id="approval-keys")  # filled by the watchers

    def compose(self) -> ComposeResult:
        r = self.request
        title = Text("Approve ", style="bold")
        title.append_text(visible_text(r.tool_name, keep="", style="bold yellow"))
        title.append("?", style="bold")
        if r.total > 1:
            title.append(f"   {r.index} of {r.total}", style="dim")
        with Vertical(id="approval-dialog"):
            with Vertical(id="approval-head"):
                yield Static(title, id="approval-title")
                reason = visible_text(f"Why: {r.reason}", keep="", style="italic")
                yield Static(reason, id="approval-reason")
                escapes = self.args_view.escapes
                if escapes:
                    yield Static(self._warning(escapes), id="approval-warning")
            with Vertical(id="approval-foot"):
                yield self.more
                yield self.keys
            yield self.args_view
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.args_view, "lines_below", self._show_more)

    @staticmethod
    def _warning(escapes: list[str]) -> Text:
        text = Text("⚠ this call contains hidden characters, shown as ", style="bold yellow")
        for escape in escapes[:_SHOWN_ESCAPES]:
            text.append(escape, style=ESCAPE_STYLE)
            text.append(" ")
        if len(escapes) > _SHOWN_ESCAPES:
            text.append("…", style="bold yellow")
        return text

    def _show_more(self, below: int) -> None:
        if below:
            lines = "line" if below == 1 else "lines"
            self.more.update(Text(f"↓ {below} more {lines}  (↓ PgDn to scroll)", style="bold"))
        else:
            self.more.update("")

    def _key_row(self) -> Text:
        if self.confirming_all:
            return Text(
                "press a again to approve every tool call for the rest of this session, "
                "any other key goes back",
                style="bold yellow",
            )
        keys = Text()
        for key, label in (("y", "approve"), ("n", "deny"), ("a", "approve all this session")):
            _key(keys, key, label, active=self.armed)
        _key(keys, "esc", "deny", active=True)
        # A second line either way, so the dialog does not move when it arms.
        if self.armed:
            keys.append("\nCtrl+C cancels the turn · ↑ ↓ PgUp PgDn scroll", "dim")
        else:
            keys.append("\nkeys are not active yet: what you type goes to the prompt", "dim")
        return keys

    # -- arming --
    def on_screen_resume(self) -> None:
        self._disarm()

    def _disarm(self) -> None:
        self.armed = False
        self.confirming_all = False
        if self._arm_timer is not None:
            self._arm_timer.stop()
        self._arm_timer = self.set_timer(self.arm_delay, self._arm)

    def _arm(self) -> None:
        self.armed = True

    def watch_armed(self) -> None:
        self.keys.update(self._key_row())
        self.set_class(not self.armed, "-disarmed")
        self.refresh_bindings()

    def watch_confirming_all(self) -> None:
        self.keys.update(self._key_row())
        self.set_class(self.confirming_all, "-confirming")

    # -- keys --
    def on_key(self, event: events.Key) -> None:
        # Runs before the bindings (they are checked once the key has bubbled to the app).
        if self.confirming_all and event.key not in ("a", "ctrl+c"):
            self.confirming_all = False
            event.stop()
            event.prevent_default()
        elif not self.armed and event.key not in _ALWAYS_ACTIVE:
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
            stack[stack.index(self) - 1].post_message(self.TypeAhead(text))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("decide", "approve_all") and not self.armed:
            return None  # shown disabled in the footer, and does nothing
        return True

    def action_decide(self, value: str) -> None:
        self.dismiss(ApprovalDecision(value))

    def action_deny(self) -> None:
        self.dismiss(ApprovalDecision.DENY)

    def action_approve_all(self) -> None:
        if self.confirming_all:
            self.dismiss(ApprovalDecision.APPROVE_ALL)
        else:
            self.confirming_all = True
