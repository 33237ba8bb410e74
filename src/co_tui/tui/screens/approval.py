"""The approval modal: what will run, exactly, and why it asks. It decides only on purpose.

- Keys decide nothing until the dialog is armed (ArmedModal): type-ahead goes to the prompt.
- `a` (approve every call for the rest of the session) asks once more.
- `p` (always allow this in this project) opens a field with the permission rule for exactly
  this call, which the user may edit (to `shell(npm test *)`, say); Enter saves it and
  approves this call, Esc goes back. The rule must cover this call. Offered only when the
  request carries a rule (`ApprovalRequest.suggested_rule`).
- `w` (a shell command, when the sandbox gives commands no network) approves this one
  command with the network on; the network line says what commands reach otherwise and
  what `w` gives. With network the command is an outbound call: what the egress guard would
  hold against it is shown, headed as being about `w`.
- `t` (no, and tell it what to do instead, as in Codex and Claude Code) opens a line for
  the user's words; Enter denies the call and the model reads them, Esc goes back.
- Arguments show their hidden characters (escape sequences, bidi, zero-width) as escapes, and
  a warning line says when there are any; the whole value scrolls, the key row stays.

y approves, n and Esc deny, Ctrl+C cancels the turn (also while a field is open).

The dialog leaves the chat's foot uncovered (`foot_rows`: its activity line, prompt and status
bar), so "waiting for you 12s" stays in sight, also at 80x24: once laid out, a dialog that shows
all its arguments in the rows above the foot moves there. One that needs more (a long or
escaped command) keeps its place over the foot, and so does one whose arguments later stop
fitting (the rule field opened): the arguments never lose a line to the foot.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Input, Static

from co_tui.permissions.matching import ToolCall
from co_tui.permissions.rules import SHELL_TOOL, Rule, RuleError
from co_tui.permissions.suggest import check_rule_for
from co_tui.protocol.frontend import (
    ApprovalAnswer,
    ApprovalDecision,
    ApprovalReply,
    ApprovalRequest,
)
from co_tui.tui.render.visible_text import visible_text
from co_tui.tui.screens.armed import (
    SCROLL_KEYS,
    UNARMED_HINT,
    ArmedModal,
    hidden_warning,
    key_label,
)
from co_tui.tui.widgets.args_view import ArgsView
from co_tui.tui.widgets.egress_sources import EgressSources
from co_tui.tui.widgets.feedback_field import FeedbackField
from co_tui.tui.widgets.keys_footer import KeysFooter


class ApprovalScreen(ArmedModal[ApprovalReply | None]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("y", "decide('approve')", "Approve"),
        Binding("w", "decide('approve_network')", "Approve with network"),
        Binding("n", "decide('deny')", "Deny"),
        Binding("t", "tell", "Tell it what to do"),
        Binding("a", "approve_all", "Approve all (session)"),
        Binding("p", "always_allow", "Always allow (project)"),
        Binding("escape", "deny", "Deny", show=False),
        # Priority: the rule field (an Input) would take Ctrl+C for copying.
        Binding("ctrl+c", "app.cancel_turn", "Cancel turn", show=False, priority=True),
    ]

    # The arguments take the focus (and the scroll keys), never the rule field before `p`.
    AUTO_FOCUS = "#approval-args"
    # Keys that never approve anything work at once: deny, cancel the turn, scroll, focus.
    ALWAYS_ACTIVE = SCROLL_KEYS | {"escape", "ctrl+c"}
    DECIDING_ACTIONS = frozenset({"decide", "approve_all", "always_allow", "tell"})

    confirming_all: reactive[bool] = reactive(False)
    editing_rule: reactive[bool] = reactive(False)
    telling: reactive[bool] = reactive(False)  # the "what to do instead" field is open

    def __init__(
        self, request: ApprovalRequest, arm_delay: float | None = None, foot_rows: int = 0
    ) -> None:
        """`foot_rows`: the rows at the screen's foot the dialog leaves uncovered (the last
        of them, the key bar, is the dialog's own)."""
        super().__init__(keys_id="approval-keys", arm_delay=arm_delay, classes="approval-screen")
        self.request = request
        self.foot_rows = foot_rows
        self.foot_clear = False  # the dialog sits above the foot
        self.dialog = Vertical(id="approval-dialog")
        self.args_view = ArgsView(request.tool_name, request.args, id="approval-args")
        self.more = Static("", id="approval-more")
        self.call = ToolCall(request.tool_name, request.args, request.mcp_tool)
        self.rule_input = Input(
            request.suggested_rule or "",
            id="approval-rule-input",
            select_on_focus=False,
            compact=True,
        )
        self.rule_status = Static("", id="approval-rule-status")
        self.rule_box = Vertical(id="approval-rule")
        self.rule_box.display = False  # until `p` opens it
        self.feedback = FeedbackField(id="approval-feedback")
        self.feedback.display = False  # until `t` opens it

    def compose(self) -> ComposeResult:
        r = self.request
        title = Text("Approve ", style="bold")
        title.append_text(visible_text(r.tool_name, keep="", style="bold yellow"))
        title.append("?", style="bold")
        if r.total > 1:
            title.append(f"   {r.index} of {r.total}", style="dim")
        with self.dialog:
            with Vertical(id="approval-head"):
                yield Static(title, id="approval-title")
                reason = visible_text(f"Why: {r.reason}", keep="", style="italic")
                yield Static(reason, id="approval-reason")
                if r.network_state:
                    yield Static(network_line(r), id="approval-network")
                escapes = self.args_view.escapes
                if escapes:
                    warning = hidden_warning("this call contains", escapes)
                    yield Static(warning, id="approval-warning")
                yield EgressSources(r, id="approval-egress")
            with Vertical(id="approval-foot"):
                yield self.more
                with self.rule_box:
                    label = "Always allow in this project (saved in your config, not here):"
                    yield Static(label, id="approval-rule-label")
                    yield self.rule_input
                    yield self.rule_status
                yield self.feedback
                yield self.keys
            yield self.args_view
        yield KeysFooter()

    def on_mount(self) -> None:
        self.watch(self.args_view, "lines_below", self._show_more)
        if self.foot_rows:
            self.call_after_refresh(self._clear_the_foot)

    def on_resize(self, event: events.Resize) -> None:
        if self.foot_clear:
            self.dialog.styles.max_height = event.size.height - self.foot_rows

    def _clear_the_foot(self) -> None:
        """Laid out where it always was: above the foot, the same size, when it fits there
        with all its arguments shown."""
        room = self.size.height - self.foot_rows
        if self.args_view.lines_below or self.dialog.outer_size.height > room:
            return
        self.foot_clear = True
        # The margin's rows, covered by no widget, show the chat's foot.
        self.dialog.styles.margin = (0, 0, self.foot_rows - 1, 0)
        self.dialog.styles.max_height = room

    def _cover_the_foot(self) -> None:
        """The arguments need the foot's rows: the dialog goes back to its place over it
        (for good: going back and forth could swing between the two)."""
        self.foot_clear = False
        self.foot_rows = 0
        self.dialog.styles.clear_rule("margin")
        self.dialog.styles.clear_rule("max_height")
        self.dialog.refresh(layout=True)

    def _show_more(self, below: int) -> None:
        if below and self.foot_clear:
            self._cover_the_foot()
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
        if self.editing_rule or self.telling:
            done = "save the rule and approve" if self.editing_rule else "deny with these words"
            key_label(keys, "enter", done, active=True)
            key_label(keys, "esc", "back", active=True)
            keys.append("\nCtrl+C cancels the turn", "dim")
            return keys
        key_label(keys, "y", "approve", active=self.armed)
        key_label(keys, "n", "deny", active=self.armed)
        if self.offers_rule:
            key_label(keys, "p", "always allow in this project", active=self.armed)
        keys.append("\n")
        if self.offers_network:
            key_label(keys, "w", "approve WITH NETWORK", active=self.armed)
        key_label(keys, "a", "approve all this session", active=self.armed)
        keys.append("\n")
        key_label(keys, "t", "no, and tell it what to do instead", active=self.armed)
        key_label(keys, "esc", "deny", active=True)
        # A last line either way, so the dialog does not move when it arms.
        if self.armed:
            usual = "Ctrl+C cancels the turn · ↑ ↓ PgUp PgDn scroll"
            keys.append(f"\n{self.armed_line(usual, 'Ctrl+C cancels the turn')}", "dim")
        else:
            keys.append(f"\n{UNARMED_HINT}", "dim")
        return keys

    # -- arming --
    def _disarm(self) -> None:
        self.confirming_all = False
        self.editing_rule = False
        self.telling = False
        super()._disarm()

    def watch_confirming_all(self) -> None:
        self.keys.update(self._key_row())
        self.set_class(self.confirming_all, "-confirming")

    def watch_editing_rule(self, editing: bool) -> None:
        self.rule_box.display = editing
        self.keys.update(self._key_row())
        self.set_class(editing, "-editing-rule")
        self.refresh_bindings()
        if editing:
            self.rule_input.focus()
            self.rule_input.cursor_position = len(self.rule_input.value)
            self._show_rule_status()
        elif self.rule_input.has_focus:
            self.args_view.focus()

    # -- "no, and tell it what to do instead" --
    def watch_telling(self, telling: bool) -> None:
        self.feedback.display = telling
        self.keys.update(self._key_row())
        self.set_class(telling, "-telling")
        self.refresh_bindings()
        if telling:
            self.feedback.focus_input()
        elif self.feedback.input.has_focus:
            self.args_view.focus()

    def on_feedback_field_submitted(self, event: FeedbackField.Submitted) -> None:
        event.stop()
        self.dismiss(ApprovalAnswer(ApprovalDecision.DENY, feedback=event.words))

    def action_tell(self) -> None:
        self.telling = True

    # -- "with network" --
    @property
    def offers_network(self) -> bool:
        return self.request.network is not None

    # -- "always allow in this project" --
    @property
    def offers_rule(self) -> bool:
        return self.request.suggested_rule is not None

    def _checked_rule(self) -> Rule | str:
        """The rule in the field, or what is wrong with it."""
        try:
            return check_rule_for(self.rule_input.value, self.call)
        except RuleError as exc:
            return str(exc)

    def _show_rule_status(self) -> None:
        rule = self._checked_rule()
        if isinstance(rule, str):
            self.rule_status.update(Text(f"✗ {rule}", style="bold red"))
            return
        status = Text(f"✓ allows {rule.describe()}", style="green")
        if rule.tool == SHELL_TOOL:
            status.append("\n  (a command with an option the read-only check refuses still asks)")
            status.stylize("dim", len(status.plain.partition("\n")[0]))
        self.rule_status.update(status)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is self.rule_input:
            self._show_rule_status()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        rule = self._checked_rule()
        if isinstance(rule, str):
            self._show_rule_status()
            self.app.bell()
            return
        self.dismiss(ApprovalAnswer(ApprovalDecision.ALWAYS_ALLOW, rule.text))

    # -- keys --
    def on_key(self, event: events.Key) -> None:
        # Runs before ArmedModal.on_key, which holds back keys while the dialog is not armed.
        if self.editing_rule and event.key == "escape":  # back to the keys, deciding nothing
            self.editing_rule = False
        elif self.telling and event.key == "escape":
            self.telling = False
        elif self.confirming_all and event.key not in ("a", "ctrl+c"):
            self.confirming_all = False
        else:
            return
        event.stop()
        event.prevent_default()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "always_allow" and not self.offers_rule:
            return False
        if action == "decide" and parameters == ("approve_network",) and not self.offers_network:
            return False
        if action in self.DECIDING_ACTIONS and (self.editing_rule or self.telling):
            return False  # the field has the keys
        return super().check_action(action, parameters)

    def action_decide(self, value: str) -> None:
        decision = ApprovalDecision(value)
        if decision is ApprovalDecision.APPROVE_WITH_NETWORK and not self.offers_network:
            return  # never more than the dialog showed
        self.dismiss(decision)

    def action_deny(self) -> None:
        self.dismiss(ApprovalDecision.DENY)

    def action_approve_all(self) -> None:
        if self.confirming_all:
            self.dismiss(ApprovalDecision.APPROVE_ALL)
        else:
            self.confirming_all = True

    def action_always_allow(self) -> None:
        if self.offers_rule:
            self.editing_rule = True


def network_line(request: ApprovalRequest) -> Text:
    """What the command reaches: the sandbox's network, and what `w` would give."""
    line = Text("Network: ", style="bold")
    line.append_text(visible_text(request.network_state, keep=""))
    offer = request.network
    if offer is not None:
        line.append("\n")
        line.append(" w ", style="reverse bold")
        line.append(" runs this command alone with ", style="")
        line.append_text(visible_text(offer.granted, keep="", style="bold yellow"))
        if offer.egress_reason:
            line.append("\n")
            line.append_text(visible_text(f"with network, {offer.egress_reason}", keep=""))
    return line
