"""ArmedModal: a modal whose keys decide only on purpose.

It can open under the fingers of someone typing the next message, so its deciding keys
(`DECIDING_ACTIONS`) do nothing until it is armed, `arm_delay` seconds after it shows.
Printable keys and Backspace that arrive before then go on to the screen underneath (the
prompt, and so its draft) as `TypeAhead`, and every such key starts the delay again: a user
who keeps typing never decides anything by accident, and loses nothing typed. Keys in
`ALWAYS_ACTIVE` (the safe ones: refuse, scroll, move focus) work at once. A paste is never
a decision.

The key row's last line says why the keys do nothing yet (`UNARMED_HINT`) and, once armed,
how many keys went to the prompt meanwhile (`typed_ahead_note`), so the text that appears
in the prompt is never a mystery.

Subclasses yield `self.keys` somewhere and build its content in `_key_row()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeVar

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Static

from co_tui.tui.render.visible_text import ESCAPE_STYLE

ARM_DELAY_S = 0.6
# One line in the narrowest dialog (80 columns), so the dialog does not move when it arms.
UNARMED_HINT = "keys arm in a moment: until then what you type goes to the prompt"
SCROLL_KEYS = frozenset({"tab", "shift+tab", "up", "down", "pageup", "pagedown", "home", "end"})
_SHOWN_ESCAPES = 4

ResultType = TypeVar("ResultType")


def key_label(text: Text, key: str, label: str, *, active: bool) -> None:
    """Append one ` key  label` pair to a key row, dimmed while it does nothing."""
    text.append(f" {key} ", style="reverse bold" if active else "reverse dim")
    text.append(f" {label}   ", style="" if active else "dim")


def hidden_warning(subject: str, escapes: list[str]) -> Text:
    """⚠ <subject> contain(s) hidden characters, shown as \\x1b \\u202e …"""
    found = list(dict.fromkeys(escapes))
    text = Text(f"⚠ {subject} hidden characters, shown as ", style="bold yellow")
    for escape in found[:_SHOWN_ESCAPES]:
        text.append(escape, style=ESCAPE_STYLE)
        text.append(" ")
    if len(found) > _SHOWN_ESCAPES:
        text.append("…", style="bold yellow")
    return text


class ArmedModal(ModalScreen[ResultType]):
    ALWAYS_ACTIVE: ClassVar[frozenset[str]] = SCROLL_KEYS | {"escape"}
    DECIDING_ACTIONS: ClassVar[frozenset[str]] = frozenset({"decide"})

    armed: reactive[bool] = reactive(False)
    typed_ahead: reactive[int] = reactive(0)  # keys handed to the prompt before arming

    @dataclass
    class TypeAhead(Message):
        """Text typed for the prompt (or a Backspace) that reached the dialog before it
        was armed."""

        text: str
        backspace: bool = False

    def __init__(self, *, keys_id: str, arm_delay: float | None = None, classes: str) -> None:
        super().__init__(classes=classes)
        self.arm_delay = ARM_DELAY_S if arm_delay is None else arm_delay
        self._arm_timer: Timer | None = None
        self.keys = Static("", id=keys_id)  # filled by watch_armed

    def _key_row(self) -> Text:
        raise NotImplementedError

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

    def watch_typed_ahead(self) -> None:
        self.keys.update(self._key_row())

    def armed_line(self, usual: str, short: str) -> str:
        """The key row's last line once armed: `usual`, or, when keys were typed before,
        where they went and `short` (one line either way)."""
        if not self.typed_ahead:
            return usual
        keys = "key" if self.typed_ahead == 1 else "keys"
        return f"{self.typed_ahead} {keys} typed early went to the prompt · {short}"

    # -- keys --
    def on_key(self, event: events.Key) -> None:
        # Runs before the bindings (they are checked once the key has bubbled to the app);
        # a subclass's own on_key runs first and may stop the key.
        if not self.armed and event.key not in self.ALWAYS_ACTIVE:
            if event.is_printable and event.character:
                self._hand_over(self.TypeAhead(event.character))
            elif event.key == "backspace":
                self._hand_over(self.TypeAhead("", backspace=True))
            self._disarm()
            event.stop()
            event.prevent_default()

    def on_paste(self, event: events.Paste) -> None:
        self._hand_over(self.TypeAhead(event.text))
        event.stop()

    def _hand_over(self, key: TypeAhead) -> None:
        stack = self.app.screen_stack
        if self in stack and stack.index(self) > 0:
            stack[stack.index(self) - 1].post_message(key)
            self.typed_ahead += 1

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.DECIDING_ACTIONS and not self.armed:
            return None  # shown disabled in the footer, and does nothing
        return True
