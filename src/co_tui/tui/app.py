"""CoApp: the full-screen app around one `ChatSession` (co_tui/session/chat.py).

The session does the work (agent, deps, history, the stored record, MCP, totals); the app
runs it in workers and answers the chat screen's requests (`Submitted`, `ShellRequested`,
`CommandRequested`, `CancelRequested`, `CopyAnswerRequested`). Each turn is an exclusive
async worker; the session's events reach the widgets as messages through `TuiFrontend`.
While a turn, `!cmd`, /command or session switch runs the screen is `busy`, and the next
queued message waits for it.

This module is the shell: the bindings, the messages, the clipboard and Ctrl+Z. The work is
done by the rooms it composes (each given the shared state of app_base.py): the start
(startup.py; the first frame comes before anything heavy), the turns and `!cmd` (turns.py),
stored sessions and drafts (session_switcher.py), the project's trust (project_trust.py),
the model picker and setup (model_choice.py), the slash commands (command_runner.py) and
what they may ask of the app (command_host.py). Tests give settings, and may inject
`bundle` and `deps`.

SIGTERM and SIGHUP (the terminal closed) cancel the running turn as Ctrl+C does, then the
app exits with 128 + the signal's number (co_tui/safety/signals.py).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker

from co_tui.config.paths import user_data_dir
from co_tui.safety.signals import StopSignals, exit_code_for
from co_tui.tui.messages import (
    CancelRequested,
    CommandDone,
    CommandRequested,
    CopyAnswerRequested,
    ItemsReleased,
    ShellRequested,
    Submitted,
)
from co_tui.tui.palette import SlashCommandProvider
from co_tui.tui.screens.chat import ChatScreen
from co_tui.tui.shell.app_base import AppBase
from co_tui.tui.shell.command_host import AppCommandHost
from co_tui.tui.shell.command_runner import CommandRunner, load_custom_commands
from co_tui.tui.shell.jobs_companion import JobsCompanion
from co_tui.tui.shell.model_choice import ModelChoice
from co_tui.tui.shell.project_trust import ProjectTrustKeeper
from co_tui.tui.shell.session_switcher import SessionSwitcher
from co_tui.tui.shell.startup import Startup
from co_tui.tui.shell.turns import TURN_GROUP, Turns
from co_tui.tui.terminal.notify import AttentionNeeded, notify_unfocused
from co_tui.tui.widgets.prompt import PromptHistory
from co_tui.tui.widgets.welcome import first_launch, remember_launch

if TYPE_CHECKING:
    from collections.abc import Sequence

    from textual.driver import Driver

    from co_tui.agent.build import AgentBundle
    from co_tui.config.settings import Settings
    from co_tui.config.trust import ProjectTrust
    from co_tui.context.deps import CoDeps
    from co_tui.store.session_store import SessionStore
    from co_tui.tui.screens.sessions import CurrentSessionDeleted
    from co_tui.tui.shell.startup import SettingsLoader

_DEFAULT = object()
BUSY_GROUPS = (TURN_GROUP, "command", "session")  # workers a queued message waits for


def css_paths() -> list[Path]:
    """styles/*.tcss: inside the installed package (wheel), else at the repository root."""
    here = Path(__file__).resolve()
    for candidate in (here.parent.parent / "styles", here.parents[3] / "styles"):
        if candidate.is_dir():
            return sorted(candidate.glob("*.tcss"))
    return []


class CoApp(AppBase):
    TITLE = "co-tui"
    CSS_PATH = css_paths()  # type: ignore[assignment]
    COMMANDS = App.COMMANDS | {SlashCommandProvider}
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f2", "spans", "Spans", show=False),
        # Ctrl+Z stops the process as in a shell (and as Claude Code and Codex do), even
        # in a modal: the prompt's undo is Ctrl+_ (tui/widgets/prompt.py).
        Binding("ctrl+z", "suspend_to_shell", "Suspend", show=False, priority=True),
    ]

    def __init__(
        self,
        settings: Settings | SettingsLoader,
        *,
        bundle: AgentBundle | None = None,
        deps: CoDeps | None = None,
        history_path: Path | object | None = _DEFAULT,
        session_store: SessionStore | None = None,
        continue_latest: bool = False,
        resume: str | None = None,
        project: ProjectTrust | None = None,
        problems: Sequence[str] = (),
    ) -> None:
        """`settings`, or how to load them once the first frame is drawn (co-tui's own
        start: nothing else is injected then, and the project comes with the settings).
        `problems`: project files that could not be read, said once the session loads."""
        super().__init__(project)
        path = user_data_dir() / "history" if history_path is _DEFAULT else history_path
        self.prompt_history = PromptHistory()  # its file is opened with the session
        self.first_launch = first_launch(user_data_dir())
        verbose = False if callable(settings) else settings.verbose
        self.chat = ChatScreen(
            self.prompt_history, show_thinking=verbose, first_launch=self.first_launch
        )
        self.turns = Turns(self)
        self.sessions = SessionSwitcher(self, self.turns)
        self.models = ModelChoice(self)
        self.trust = ProjectTrustKeeper(self, reload_commands=partial(load_custom_commands, self))
        self.command_host = AppCommandHost(self, self.sessions, self.models, self.trust)
        self.commands = CommandRunner(self, self.command_host, self.models)
        self.startup = Startup(
            self,
            load_settings=settings if callable(settings) else None,
            prompt_history=self.prompt_history,
            history_path=path if isinstance(path, Path) else None,
            problems=list(problems),
            continue_latest=continue_latest,
            resume=resume,
            trust=self.trust,
            sessions=self.sessions,
            models=self.models,
        )
        if not callable(settings):
            self.startup.make_session(settings, session_store, bundle, deps)
        self.stop_signals = StopSignals(self.stop_for_signal)
        self.jobs_companion = JobsCompanion(self, self.chat, self.loaded)

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        if driver.__module__ == "textual.drivers.linux_driver":  # a terminal: it may hang up
            from co_tui.tui.terminal.driver import HangupSafeDriver

            return HangupSafeDriver
        return driver

    def get_default_screen(self) -> ChatScreen:
        return self.chat

    def on_mount(self) -> None:
        self.stop_signals.install()
        self.idle_gc.install()
        self.app_resume_signal.subscribe(self, self._redraw_after_suspend)
        if self.first_launch:
            remember_launch(user_data_dir())
        self.startup.first_frame()
        self.jobs_companion.start_when_loaded()

    def on_unmount(self) -> None:
        self.chat.save_draft()  # what was typed since the last save
        self.stop_signals.uninstall()
        self.idle_gc.uninstall()
        self.jobs_companion.stop()

    # -- what the chat screen asks for --
    @on(Submitted)
    def _submitted(self, message: Submitted) -> None:
        self.start_turn(message.prompt)

    @on(ShellRequested)
    def _shell_requested(self, message: ShellRequested) -> None:
        self.turns.run_bang(message.command)

    @on(CommandRequested)
    def _command_requested(self, message: CommandRequested) -> None:
        self.run_command(message.text)

    @on(CancelRequested)
    def _cancel_requested(self) -> None:
        self.cancel_turn()

    @on(CommandDone)
    def _command_done(self) -> None:
        self.jobs_companion.count_inbox()

    @on(CopyAnswerRequested)
    def _copy_requested(self) -> None:
        self.copy_last_answer()

    @on(ItemsReleased)
    def _items_released(self) -> None:
        self.idle_gc.thaw_next()
        if not self.turn_running:  # else the turn's end schedules the collection
            self.idle_gc.idle_soon()

    @on(AttentionNeeded)
    def _attention_needed(self, message: AttentionNeeded) -> None:
        if self.settings.notifications:
            notify_unfocused(self, message.body)

    def on_current_session_deleted(self, _: CurrentSessionDeleted) -> None:
        self.sessions.current_session_deleted()

    # -- turns, commands --
    @property
    def turn_running(self) -> bool:
        return self.turns.running

    @property
    def busy(self) -> bool:
        """A turn, `!cmd`, /command or session switch runs: what the user sends now waits."""
        return any(w.group in BUSY_GROUPS and not w.is_finished for w in self.workers)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group in BUSY_GROUPS:
            self.chat.busy = self.busy
            self.chat.turn_running = self.turn_running

    def start_turn(self, prompt: str) -> None:
        self.turns.start(prompt)

    def cancel_turn(self) -> None:
        self.turns.cancel()

    def action_cancel_turn(self) -> None:
        self.cancel_turn()

    def run_command(self, text: str) -> None:
        self.commands.run(text)

    def stop_for_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP: cancel the turn as Ctrl+C does, wait until it is saved and its
        commands are gone, then exit with 128 + signum."""
        self.run_worker(self._exit_after_turn(exit_code_for(signum)), group="exit")

    async def _exit_after_turn(self, code: int) -> None:
        await self.turns.cancel_and_wait()
        self.exit(return_code=code)

    # -- Ctrl+Z --
    def action_suspend_to_shell(self) -> None:
        """Stop co-tui and give the terminal back to the shell; `fg` brings it back as it
        was (Textual's driver redraws). Only when a shell is there to do that."""
        from co_tui.tui.terminal.job_control import why_no_suspend

        problem = why_no_suspend()
        if problem is None and self._driver is not None and self._driver.can_suspend:
            self.chat.save_draft()  # on disk should the stopped process be killed
            self.action_suspend_process()
            return
        problem = problem or "this terminal cannot suspend co-tui"
        self.notify(f"Ctrl+Z: {problem}. Ctrl+Q quits.", severity="warning", timeout=5)

    def _redraw_after_suspend(self, _app: App[None]) -> None:
        # Back from Ctrl+Z (`fg`) the terminal shows a blank alternate screen; Textual
        # repaints only what changed since (its own `suspend()` lays out again, as here).
        self.refresh(layout=True)

    # -- span viewer (F2, /spans) --
    def action_spans(self) -> None:
        self.command_host.open_spans("")

    # -- clipboard --
    def copy_to_clipboard(self, text: str, what: str = "") -> None:
        """Every copy (the prompt's, a selection, /copy, Ctrl+O): OSC 52 as Textual sends
        it, and the local clipboard tool (co_tui/tui/terminal/clipboard.py); a toast says which."""
        super().copy_to_clipboard(text)
        self._copy_locally(text, what)

    @work(thread=True, group="clipboard", exit_on_error=False)
    def _copy_locally(self, text: str, what: str) -> None:
        from co_tui.tui.terminal.clipboard import copy_locally

        outcome = copy_locally(text)
        severity = "warning" if outcome.failed else "information"
        self.call_from_thread(self.notify, outcome.message(what), severity=severity, timeout=4)

    def copy_last_answer(self) -> None:
        answer = self.made_session.last_answer if self.made_session is not None else ""
        if not answer:
            self.notify("Nothing to copy yet.", timeout=2)
            return
        self.copy_to_clipboard(answer, "the last answer")
