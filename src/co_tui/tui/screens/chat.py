"""The chat screen: transcript + sidebar, the prompt, the status bar, the footer.

Everything sent goes through the prompt's queue: `send_next_queued` dispatches the oldest
message once the app is not busy (no turn, `!cmd`, /command or session switch running), so
a message sent during a turn waits for it and each becomes its own turn, in order.
`dispatch` routes what the user typed: exit/quit, `!cmd` (sandbox), `/command`, or a turn.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from co_tui.tui.widgets.prompt import CompletionHint, PromptHistory, PromptInput
from co_tui.tui.widgets.queued import QueuedMessages
from co_tui.tui.widgets.sidebar import Sidebar
from co_tui.tui.widgets.status_bar import StatusBar
from co_tui.tui.widgets.transcript import Transcript, UserMessage

if TYPE_CHECKING:
    from co_tui.tui.app import CoApp
    from co_tui.tui.screens.armed import ArmedModal

EXIT_WINDOW_S = 2.0
EXIT_WORDS = {"exit", "quit"}
PLACEHOLDER = "Ask anything · /help for commands · !cmd runs a shell command"
BUSY_PLACEHOLDER = "working… Enter queues a message · Esc or Ctrl+C cancels the turn"


class ChatScreen(Screen[None]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("escape", "interrupt", "Cancel turn"),
        Binding("ctrl+c", "ctrl_c", "Cancel / exit", show=False),
        Binding("ctrl+t", "toggle_thinking", "Thinking"),
        Binding("ctrl+b", "toggle_sidebar", "Sidebar"),
        Binding("ctrl+o", "copy_last", "Copy answer"),
    ]

    app: CoApp  # type: ignore[assignment]

    def __init__(self, history: PromptHistory, show_thinking: bool) -> None:
        super().__init__(id="chat")
        self.transcript = Transcript(id="transcript")
        self.sidebar = Sidebar(show_thinking=show_thinking, id="sidebar")
        self.prompt = PromptInput(history, id="prompt")
        self.hint = CompletionHint("", id="completion-hint", markup=False)
        self.queued = QueuedMessages("", id="queued", markup=False)
        self.status_bar = StatusBar(id="status-bar")
        self._last_ctrl_c = 0.0

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield self.transcript
            yield self.sidebar
        with Vertical(id="prompt-area"):
            yield self.queued
            yield self.hint
            yield self.prompt
        yield self.status_bar
        yield Footer()

    def on_mount(self) -> None:
        self.hint.display = False
        self.prompt.placeholder = PLACEHOLDER
        self.watch(self.prompt, "queued", self._queue_changed)
        self.prompt.focus()

    def _queue_changed(self, queued: tuple[str, ...]) -> None:
        self.queued.messages = queued
        self.refresh_bindings()

    # -- input --
    def on_text_area_changed(self, event: PromptInput.Changed) -> None:
        if event.text_area is self.prompt:
            self.hint.show_for(self.prompt.text)

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        self.prompt.enqueue(event.text)
        self.send_next_queued()

    def send_next_queued(self) -> None:
        """Dispatch the oldest queued message, unless something is still running (the app
        calls this again when it ends)."""
        while not self.app.busy and (text := self.prompt.next_queued()) is not None:
            self.dispatch(text)  # a message that starts nothing (`!` alone) lets the next go

    def on_armed_modal_type_ahead(self, event: ArmedModal.TypeAhead) -> None:
        self.prompt.insert(event.text)

    def dispatch(self, text: str) -> None:
        stripped = text.strip()
        if not stripped:
            return
        if stripped.lower() in EXIT_WORDS:
            self.prompt.queued = ()
            self.app.exit()
        elif stripped.startswith("!"):
            self.transcript.add(UserMessage(f"`!{stripped[1:].strip()}`"))
            self.app.run_bang(stripped[1:].strip())
        elif stripped.startswith("/"):
            self.app.run_command(stripped)
        else:
            self.transcript.add(UserMessage(text))
            self.transcript.anchor()
            self.app.start_turn(text)

    def set_busy(self, busy: bool) -> None:
        self.prompt.busy = busy
        self.status_bar.set(busy=busy)
        self.prompt.placeholder = BUSY_PLACEHOLDER if busy else PLACEHOLDER
        self.refresh_bindings()

    # -- keys --
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":
            return self.app.turn_running or bool(self.prompt.queued)
        return True

    def action_interrupt(self) -> None:
        """Esc: take the last queued message back to edit; with none queued, cancel."""
        if not self.prompt.take_back_last():
            self.app.cancel_turn()

    def action_ctrl_c(self) -> None:
        if self.app.turn_running:
            self.app.cancel_turn()
            return
        selected = self.get_selected_text()
        if selected:
            self.app.copy_to_clipboard(selected)
            self.app.notify("Copied the selection.", timeout=2)
            self.clear_selection()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= EXIT_WINDOW_S:
            self.app.exit()
            return
        self._last_ctrl_c = now
        self.app.notify("Press Ctrl+C again to exit", timeout=EXIT_WINDOW_S)

    def action_toggle_thinking(self) -> None:
        self.sidebar.set_show_thinking(not self.sidebar.show_thinking)
        if self.sidebar.show_thinking and not self.sidebar.display:
            self.sidebar.display = True

    def action_toggle_sidebar(self) -> None:
        self.sidebar.display = not self.sidebar.display

    def action_copy_last(self) -> None:
        self.app.copy_last_answer()
