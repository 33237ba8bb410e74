"""The chat screen: transcript + sidebar, the prompt, the status bar, the footer.

Down: the session's events arrive as `SessionEvent`s; the display router (tui/display.py)
sends each on, as a `ShowEvent`, to the widget that shows it. An `ApprovalAsked` opens the
dialog once the transcript has drawn what came before.

Up: everything sent goes through the prompt's queue: `send_next_queued` dispatches the oldest
message while the screen is not `busy` (the app keeps that reactive true while a turn,
`!cmd`, /command or session switch runs), so a message sent during a turn waits for it and
each becomes its own turn, in order. `dispatch` routes what the user typed: exit/quit, `!cmd`
(sandbox), `/command`, or a turn, each posted to the app as a message.

The session's status (model, sandbox, tokens, …) is one `SessionStatus` value
(session/status.py) in this screen's `status` reactive; the status bar, the welcome and the
sidebar are bound to it. The app derives it afresh from the session (`refresh_status`); in
between, this screen follows the main session's usage and retries from its events, each a
new value made with `replace`. What the session is doing now (`activity`:
waiting for the provider, thinking, running a command, waiting for the user's decision) is
derived from its events by the display router and bound to the activity line.

What the prompt holds and has not sent (its text, folded pastes, queued messages) is kept on
disk while it changes, at most every DRAFT_SAVE_S (tui/shell/draft_keeper.py), and at once when it
is all sent: the app gives the keeper once the session exists.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.reactive import reactive
from textual.screen import Screen

from co_tui.session.status import SessionStatus
from co_tui.tui.display import DisplayRouter, Target
from co_tui.tui.messages import (
    ApprovalAsked,
    CancelRequested,
    CommandOutput,
    CommandRequested,
    ConversationCleared,
    CopyAnswerRequested,
    Notice,
    SessionEvent,
    Settle,
    ShellRequested,
    ShowEvent,
    Submitted,
    TranscriptRestored,
)
from co_tui.tui.terminal.notify import AttentionNeeded
from co_tui.tui.widgets.activity import Activity, ActivityLine, Clock
from co_tui.tui.widgets.find_bar import FindBar
from co_tui.tui.widgets.history_search import HistorySearch
from co_tui.tui.widgets.items import Note, RenderedItem
from co_tui.tui.widgets.keys_footer import KeysFooter
from co_tui.tui.widgets.mention_picker import MentionPicker, mention_at_cursor
from co_tui.tui.widgets.new_output import NewOutputMarker
from co_tui.tui.widgets.prompt import CompletionHint, PromptHistory, PromptInput
from co_tui.tui.widgets.queued import QueuedMessages
from co_tui.tui.widgets.sidebar import Sidebar
from co_tui.tui.widgets.status_bar import StatusBar
from co_tui.tui.widgets.transcript import Transcript
from co_tui.tui.widgets.user_message import UserMessage
from co_tui.tui.widgets.welcome import Welcome

if TYPE_CHECKING:  # at run time turn events are imported where matched (see tui/display.py)
    from textual.timer import Timer

    from co_tui.protocol import events as ev
    from co_tui.protocol.frontend import ApprovalReply
    from co_tui.session.commands.custom import CustomCommand
    from co_tui.store.drafts import Draft
    from co_tui.tui.screens.armed import ArmedModal
    from co_tui.tui.shell.draft_keeper import DraftKeeper

EXIT_WINDOW_S = 2.0
# The transcript never narrows as the terminal widens: it stops growing at TRANSCRIPT_CAP
# columns until the sidebar fits beside it (styles/chat.tcss holds the same numbers).
TRANSCRIPT_CAP = 100
SIDEBAR_NARROWEST = 26
SIDEBAR_WIDEST = 38
SIDEBAR_MIN_WIDTH = TRANSCRIPT_CAP + SIDEBAR_NARROWEST  # below it the sidebar folds away
EXIT_WORDS = {"exit", "quit"}
DIALOG_MIN_ROWS = 16  # an approval dialog gets this many rows above the activity line, or all
PLACEHOLDER = "Ask anything · /help for commands · !cmd runs a shell command"
BUSY_PLACEHOLDER = "working… Enter queues a message · Esc or Ctrl+C cancels the turn"
DRAFT_SAVE_S = 0.5  # at most this much typing is lost to a crash


def sidebar_width(terminal_width: int) -> int:
    """The sidebar's columns beside the transcript on a terminal this wide: what the
    transcript leaves above TRANSCRIPT_CAP, up to SIDEBAR_WIDEST (on a narrow terminal, where
    it is drawn over the transcript, SIDEBAR_WIDEST)."""
    if terminal_width < SIDEBAR_MIN_WIDTH:
        return SIDEBAR_WIDEST
    return min(SIDEBAR_WIDEST, terminal_width - TRANSCRIPT_CAP)


def provider_name(model_label: str) -> str:
    """Who a request waits for: the provider of a label such as "gemini:gemini-2.5-flash"
    (the first of a fallback chain)."""
    first = model_label.split(" → ", 1)[0]
    provider = first.split(":", 1)[0] if ":" in first else first
    return "the local model" if provider == "local" else provider


class ChatScreen(Screen[None]):
    # "-narrow": the sidebar is hidden unless asked for, then drawn over the transcript.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (SIDEBAR_MIN_WIDTH, "-wide")]  # noqa: RUF012

    # The session's status, shown by the status bar, the welcome and the sidebar.
    status: reactive[SessionStatus] = reactive(SessionStatus())
    busy = reactive(False, init=False)  # a turn, `!cmd`, /command or session switch runs
    turn_running = reactive(False, init=False)
    activity: reactive[Activity | None] = reactive(None, init=False)  # None: nothing runs
    # Ctrl+B: hidden on a wide screen by choice (it stays so across resizes); shown over the
    # transcript on a narrow one (until Ctrl+B again or the screen is wide again).
    sidebar_hidden = reactive(False, init=False, toggle_class="-sidebar-hidden")
    sidebar_overlay = reactive(False, init=False, toggle_class="-sidebar-overlay")

    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        # Not in the key bar: the status bar says "Esc cancels" while a turn runs.
        Binding("escape", "interrupt", "Cancel turn", show=False),
        Binding("ctrl+c", "ctrl_c", "Cancel / exit", show=False),
        Binding("ctrl+t", "toggle_thinking", "Thinking"),
        Binding("ctrl+b", "toggle_sidebar", "Sidebar"),
        Binding("ctrl+o", "copy_last", "Copy answer"),
        # The transcript scrolls from the keyboard while the prompt keeps focus.
        Binding("pageup", "transcript_page(-1)", "Page up", show=False, priority=True),
        Binding("pagedown", "transcript_page(1)", "Page down", show=False, priority=True),
        Binding("shift+up", "transcript_line(-1)", "Line up", show=False, priority=True),
        Binding("shift+down", "transcript_line(1)", "Line down", show=False, priority=True),
        Binding("ctrl+home", "transcript_top", "Top", show=False, priority=True),
        Binding("ctrl+end", "transcript_bottom", "Bottom", show=False, priority=True),
        # End in the prompt moves its cursor, unless "↓ new output" shows and there is
        # nowhere to move: then it goes down to that output.
        Binding("end", "new_output", "New output", show=False, priority=True),
        Binding("ctrl+f", "find", "Find", show=False),
        Binding("ctrl+r", "history_search", "History", show=False),
    ]

    def __init__(
        self,
        history: PromptHistory,
        show_thinking: bool,
        *,
        first_launch: bool = False,
        clock: Clock = time.monotonic,
    ) -> None:
        """`clock`: what the activity line times with."""
        super().__init__(id="chat")
        # The app gives it the session's workspace and vault once the session is built.
        self.picker = MentionPicker(Path.cwd(), None, id="mention-picker")
        self.welcome = Welcome(first=first_launch, id="welcome")
        self.transcript = Transcript(id="transcript")
        self.sidebar = Sidebar(show_thinking=show_thinking, id="sidebar")
        self.prompt = PromptInput(history, id="prompt")
        self.hint = CompletionHint("", id="completion-hint", markup=False)
        self.queued = QueuedMessages("", id="queued", markup=False)
        self.find_bar = FindBar(id="find-bar")
        self.history_search = HistorySearch(id="history-search")
        self.status_bar = StatusBar(id="status-bar")
        self.activity_line = ActivityLine(clock=clock, id="activity")
        self.prompt_area = Vertical(id="prompt-area")  # the activity line, the prompt
        self.new_output = NewOutputMarker(id="new-output")
        self.router = DisplayRouter()
        self._asking = 0  # approval dialogs open (or about to open)
        self._sidebar_for_thinking = False  # Ctrl+T showed the sidebar: Ctrl+T hides it
        self._last_ctrl_c = 0.0
        self.drafts: DraftKeeper | None = None  # the app gives it with the session
        self._draft_timer: Timer | None = None

    @property
    def custom_commands(self) -> dict[str, CustomCommand]:
        """The user's, a trusted project's and the skills' /commands (the app loads them;
        the prompt completes them)."""
        return self.prompt.custom_commands

    @custom_commands.setter
    def custom_commands(self, loaded: dict[str, CustomCommand]) -> None:
        self.prompt.custom_commands = loaded

    def compose(self) -> ComposeResult:
        # The breakpoint class Textual gives the screen at its first resize, given before the
        # children are styled (when the screen is first shown): given after, it restyles
        # every widget (10-40 ms, as the first keys are typed).
        wide = self.app.size.width >= SIDEBAR_MIN_WIDTH
        self.update_classes({"-wide": wide, "-narrow": not wide}, update=False)
        self.sidebar.styles.width = sidebar_width(self.app.size.width)
        yield self.welcome.data_bind(ChatScreen.status)
        with Horizontal(id="main"):
            yield self.new_output
            yield self.transcript
            yield self.sidebar.data_bind(ChatScreen.status)
        with self.prompt_area:
            yield self.activity_line.data_bind(
                ChatScreen.activity, cancellable=ChatScreen.turn_running
            )
            yield self.find_bar
            yield self.history_search
            yield self.queued
            yield self.picker
            yield self.hint
            yield self.prompt
        yield self.status_bar.data_bind(ChatScreen.status)
        yield KeysFooter()

    def on_mount(self) -> None:
        self.hint.display = False
        self.prompt.placeholder = PLACEHOLDER
        self.watch(self.prompt, "queued", self._queue_changed)
        self.watch(self.picker, "open", self._picker_opened)
        self.watch(self.transcript, "unseen_output", self._unseen_output, init=False)
        self.prompt.focus()

    def _unseen_output(self, unseen: bool) -> None:
        self.new_output.display = unseen

    @on(NewOutputMarker.Pressed)
    def _to_new_output(self) -> None:
        self.transcript.to_bottom()

    def action_new_output(self) -> None:
        if not self.new_output.display or not self.prompt.cursor_at_end_of_line:
            raise SkipAction()
        self.transcript.to_bottom()

    def _queue_changed(self, queued: tuple[str, ...]) -> None:
        self.queued.messages = queued
        self.refresh_bindings()
        self.draft_changed()

    # -- the draft on disk --
    def draft_changed(self) -> None:
        """Keep the draft soon; all sent, forget it now (a crash must not bring it back)."""
        if self.drafts is None:
            return
        draft = self.prompt.draft()
        if draft.empty:
            self.save_draft(draft)
        elif self._draft_timer is None:
            self._draft_timer = self.set_timer(DRAFT_SAVE_S, self.save_draft)

    def save_draft(self, draft: Draft | None = None) -> None:
        """Keep the draft now (the app does at exit)."""
        if self._draft_timer is not None:
            self._draft_timer.stop()
            self._draft_timer = None
        if self.drafts is not None:
            self.drafts.keep(draft or self.prompt.draft())

    def restore_draft(self, draft: Draft) -> None:
        self.prompt.restore_draft(draft)
        self.app.notify("Your unsent draft is back in the prompt.", timeout=4)

    # -- down: the session's events --
    @on(SessionEvent)
    def _route(self, message: SessionEvent) -> None:
        event = message.event
        display, targets = self.router.targets(event)
        if not display.is_subagent:
            self.welcome.display = False  # the conversation has begun
            self._follow_status(event)
        for target in targets:
            widget = self.transcript if target is Target.TRANSCRIPT else self.sidebar
            widget.post_message(ShowEvent(event, subagent=display.is_subagent))
        self._follow_activity()

    def _follow_activity(self) -> None:
        """The activity line's: the user's decision first, then what the main session does.
        A /command has no line of its own (most end at once: the line would only make the
        screen jump); the prompt says "working…" while one runs."""
        main = self.router.main
        if self._asking:
            self.activity = Activity("waiting for you", key="approval")
        elif main is not None:
            self.activity = main.activity(provider_name(self.status.model))
        else:
            self.activity = None

    def _follow_status(self, event: ev.TurnEvent) -> None:
        """The main session's tokens and retries, for the status bar."""
        from co_tui.protocol import events as ev

        match event:
            case ev.TurnStart(replayed=False):
                self.status = self.status.turn_started()
            case ev.Usage(input_tokens=sent, output_tokens=received):
                self.status = self.status.turn_used(sent + received)
            case ev.Status(retry_in_s=delay) if delay is not None:
                self.status = replace(self.status, note=f"retrying in {delay:g}s")
            case _:
                pass

    @on(ApprovalAsked)
    def _ask(self, message: ApprovalAsked) -> None:
        """The dialog opens once the answer that led here is drawn: a screen under a modal
        is not laid out again until the modal closes."""
        settled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        settled.add_done_callback(lambda _: self._open_dialog(message))
        self.transcript.post_message(Settle(settled, laid_out=True))
        message.reply.add_done_callback(lambda _: self._asked())
        self._asking += 1
        self._follow_activity()

    def _asked(self) -> None:
        """An approval was answered (or its turn cancelled)."""
        self._asking = max(0, self._asking - 1)
        self._follow_activity()

    def _open_dialog(self, message: ApprovalAsked) -> None:
        from co_tui.policy.approvals import key_argument
        from co_tui.protocol.frontend import ApprovalDecision
        from co_tui.tui.screens.approval import ApprovalScreen

        if message.reply.done():  # the turn was cancelled meanwhile
            return
        request = message.request
        self.sidebar.waiting_for_approval(request.tool_call_id, request.tool_name)
        self.post_message(
            AttentionNeeded(
                f"{request.tool_name} waits for your decision: "
                f"{key_argument(request.tool_name, request.args)}"
            )
        )

        def decided(decision: ApprovalReply | None) -> None:
            if not message.reply.done():
                message.reply.set_result(
                    decision if decision is not None else ApprovalDecision.DENY
                )

        self.app.push_screen(ApprovalScreen(message.request, foot_rows=self._foot_rows()), decided)

    def _foot_rows(self) -> int:
        """The rows from the activity line down, which a dialog leaves uncovered, or none
        when the screen is too short to give the dialog what it needs above them."""
        foot = self.size.height - self.prompt_area.region.y
        return foot if self.size.height - foot >= DIALOG_MIN_ROWS else 0

    @on(TranscriptRestored)
    def _restored(self, message: TranscriptRestored) -> None:
        self.router = DisplayRouter()
        self.sidebar.new_turn()
        self.welcome.display = False  # a conversation is back: the welcome has done its job
        self.transcript.post_message(
            TranscriptRestored(message.events, message.visible, keep_shown=message.keep_shown)
        )

    @on(ConversationCleared)
    def _cleared(self) -> None:
        self.router = DisplayRouter()
        self.transcript.clear_all()
        self.sidebar.new_turn()

    @on(Notice)
    def _notice(self, message: Notice) -> None:
        self.transcript.add(Note(message.message, message.level))

    @on(CommandOutput)
    def _command_output(self, message: CommandOutput) -> None:
        from co_tui.tui.render.markdown import TranscriptMarkdown

        content = message.content
        renderable = TranscriptMarkdown(content) if isinstance(content, str) else content
        self.transcript.add(RenderedItem(renderable, "command-output"))  # type: ignore[arg-type]
        self.transcript.scroll_end(animate=False)

    # -- input --
    def on_text_area_changed(self, event: PromptInput.Changed) -> None:
        if event.text_area is self.prompt:
            self.hint.show_for(self.prompt.text, self.custom_commands)
            self._follow_mention()
            self.draft_changed()

    def on_text_area_selection_changed(self, event: PromptInput.SelectionChanged) -> None:
        if event.text_area is self.prompt:
            self._follow_mention()

    # -- the @ picker --
    def _follow_mention(self) -> None:
        self.picker.mention = mention_at_cursor(self.prompt.line_before_cursor())

    def _picker_opened(self, open_: bool) -> None:
        self.prompt.mention_open = open_

    def on_prompt_input_mention_key(self, event: PromptInput.MentionKey) -> None:
        match event.key:
            case "up" | "down":
                self.picker.move(-1 if event.key == "up" else 1)
            case "enter" | "tab":
                self.picker.choose()
            case _:
                self.picker.dismiss()

    def on_mention_picker_chosen(self, event: MentionPicker.Chosen) -> None:
        self.prompt.replace_mention(event.text)
        self.prompt.focus()

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        self.prompt.enqueue(event.text)
        self.send_next_queued()

    def send_next_queued(self) -> None:
        """Dispatch the oldest queued message, unless something is still running (this runs
        again when `busy` turns false)."""
        while not self.busy and (text := self.prompt.next_queued()) is not None:
            self.dispatch(text)  # a message that starts nothing (`!` alone) lets the next go
        self.prompt.forget_unused_pastes()

    def on_armed_modal_type_ahead(self, event: ArmedModal.TypeAhead) -> None:
        if event.backspace:
            self.prompt.action_delete_left()
        else:
            self.prompt.insert(event.text)

    def dispatch(self, typed: str) -> None:
        """`typed`: as the prompt showed it; what runs has each folded paste in its place."""
        from co_tui.session import commands

        text = self.prompt.expanded(typed)
        stripped = text.strip()
        if not stripped:
            return
        if stripped.lower() in EXIT_WORDS:
            self.prompt.queued = ()
            self.app.exit()
        elif stripped.startswith("!"):
            command = stripped[1:].strip()
            self.transcript.add(UserMessage(f"!{command}"))
            if not command:
                self.transcript.add(Note("usage: !<shell command>", "info"))
                return
            self._start(ShellRequested(command))
        elif commands.is_command(stripped, self.custom_commands):
            name, arguments = commands.parse(stripped)
            custom = self.custom_commands.get(name)
            if custom is not None and name not in commands.COMMANDS:
                self.transcript.add_prompt(UserMessage(text))  # the model gets the expansion
                self._start(Submitted(custom.expand(arguments)))
                return
            echo = Text(stripped, style="dim")
            self.transcript.add(RenderedItem(echo, "command-echo"))
            self._start(CommandRequested(stripped))
        else:
            self.transcript.add_prompt(UserMessage(text, typed))
            self._start(Submitted(text))

    def _start(self, request: ShellRequested | CommandRequested | Submitted) -> None:
        """Ask the app to run it; busy from now on, so the queue waits for it."""
        self.busy = True
        self.post_message(request)

    def watch_busy(self, busy: bool) -> None:
        if busy:  # the first turn or command: the welcome has done its job
            self.welcome.display = False
        self.prompt.busy = busy
        self.prompt.placeholder = BUSY_PLACEHOLDER if busy else PLACEHOLDER
        if not busy:  # the next message goes once the transcript has drawn what came before
            drawn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            drawn.add_done_callback(lambda _: self.send_next_queued())
            self.transcript.post_message(Settle(drawn))

    def watch_turn_running(self) -> None:
        self.refresh_bindings()

    # -- keys --
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":
            return self.turn_running or bool(self.prompt.queued)
        if action == "transcript_line":  # in a prompt of several lines Shift+arrows select
            return not (self.prompt.has_focus and "\n" in self.prompt.text)
        return True

    def action_interrupt(self) -> None:
        """Esc: take the last queued message back to edit; with none queued, cancel."""
        if not self.prompt.take_back_last():
            self.post_message(CancelRequested())

    def on_prompt_input_draft_set_aside(self, _: PromptInput.DraftSetAside) -> None:
        self._last_ctrl_c = 0.0  # a cleared draft disarms exit: two more presses quit
        self.app.notify("Draft cleared; Up brings it back.", timeout=3)

    def action_ctrl_c(self) -> None:
        if self.turn_running:
            self.post_message(CancelRequested())
            return
        selected = self.get_selected_text()
        if selected:
            self.app.copy_to_clipboard(selected)  # CoApp's: it says how it was copied
            self.clear_selection()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= EXIT_WINDOW_S:
            self.app.exit()
            return
        self._last_ctrl_c = now
        self.app.notify("Press Ctrl+C again to exit", timeout=EXIT_WINDOW_S)

    def action_toggle_thinking(self) -> None:
        """Ctrl+T: the live thinking in the sidebar, shown with it when it was hidden; off
        again, the sidebar goes back to how it was (a narrow screen's overlay closes)."""
        showing = self.sidebar.show_thinking = not self.sidebar.show_thinking
        if showing and not self.sidebar_shown:
            self.action_toggle_sidebar()
            self._sidebar_for_thinking = True
        elif not showing and self._sidebar_for_thinking:
            if self.sidebar_shown:
                self.action_toggle_sidebar()
            self._sidebar_for_thinking = False

    # -- the sidebar's place: CSS classes (chat.tcss) follow the width and the user's choice --
    @property
    def narrow(self) -> bool:
        return self.has_class("-narrow")

    @property
    def sidebar_shown(self) -> bool:
        return self.sidebar_overlay if self.narrow else not self.sidebar_hidden

    def action_toggle_sidebar(self) -> None:
        self._sidebar_for_thinking = False  # the user's own choice from now on
        if self.narrow:
            self.sidebar_overlay = not self.sidebar_overlay
        else:
            self.sidebar_hidden = not self.sidebar_hidden

    def on_resize(self, event: Resize) -> None:
        if event.size.width >= SIDEBAR_MIN_WIDTH:  # the overlay was a look while narrow
            self.sidebar_overlay = False
        self.sidebar.styles.width = sidebar_width(event.size.width)

    def action_transcript_page(self, direction: int) -> None:
        self.transcript.page(direction)

    def action_transcript_line(self, direction: int) -> None:
        self.transcript.line(direction)

    def action_transcript_top(self) -> None:
        self.transcript.to_top()

    def action_transcript_bottom(self) -> None:
        self.transcript.to_bottom()

    def action_find(self) -> None:
        self.open_find()

    def action_history_search(self) -> None:
        """Ctrl+R: search the prompts sent before; the search takes the prompt's place (as
        a shell's reverse search takes its prompt line) until it ends."""
        self.history_search.open(self.prompt.prompt_history.entries)
        self.prompt.display = False

    @on(HistorySearch.Chosen)
    def _history_chosen(self, message: HistorySearch.Chosen) -> None:
        self.prompt.recall(message.text)

    @on(HistorySearch.Closed)
    def _history_closed(self) -> None:
        self.prompt.display = True
        self.prompt.focus()

    def open_find(self, text: str = "") -> None:
        """The find bar (Ctrl+F, /find [text])."""
        self.find_bar.open(text)

    @on(FindBar.Find)
    def _find(self, message: FindBar.Find) -> None:
        if not self.find_bar.is_open:  # typed before Esc, handled after it: nothing to show
            return
        if message.step == 0 and message.query != self.find_bar.field.value:
            return  # typed on since: the newer query's search follows (one search a burst)
        self.find_bar.show_result(*self.transcript.find(message.query, message.step))

    @on(FindBar.Closed)
    def _find_closed(self) -> None:
        self.transcript.clear_found()
        self.prompt.focus()

    def action_copy_last(self) -> None:
        self.post_message(CopyAnswerRequested())
