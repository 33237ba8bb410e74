"""CoApp: the full-screen app around one `ChatSession` (co_tui/session/chat.py).

The session does the work (agent, deps, history, the stored record, MCP, totals); the app
runs it in workers and answers the chat screen's requests (`Submitted`, `ShellRequested`,
`CommandRequested`, `CancelRequested`, `CopyAnswerRequested`). Each turn is an exclusive
async worker; the session's events reach the widgets as messages through `TuiFrontend`.
While a turn, `!cmd`, /command or session switch runs the screen is `busy`, and the next
queued message waits for it.

Start-up draws the first frame before anything heavy. `co-tui` itself gives the app a way to
load its settings rather than the settings: they are read and validated in a thread right
after the first frame (pydantic and the settings sources took 0.1-0.2 s before it), then the
session is made; keys typed meanwhile are echoed at once, and what is sent waits for it. A
settings error ends the app with exit code 2 and its message (`settings_error`). The agent
(pydantic-ai, provider SDKs) and the sandbox are built in a worker after that. Tests give
settings, and may inject `bundle` and `deps`. In a project whose settings would widen what
co-tui may do (co_tui.config.trust), that worker first asks whether to trust it (once per settings
file), before anything those settings would start.

SIGTERM and SIGHUP (the terminal closed) cancel the running turn as Ctrl+C does, then the
app exits with 128 + the signal's number (co_tui/safety/signals.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker

from co_tui.config.paths import user_data_dir
from co_tui.context.usage import format_cost
from co_tui.safety.signals import StopSignals, exit_code_for
from co_tui.tui.messages import (
    CancelRequested,
    CommandOutput,
    CommandRequested,
    ConversationCleared,
    CopyAnswerRequested,
    ItemsReleased,
    Notice,
    ShellRequested,
    Submitted,
    TranscriptRestored,
)
from co_tui.tui.palette import SlashCommandProvider
from co_tui.tui.screens.chat import ChatScreen
from co_tui.tui.terminal.idle_gc import IdleCollector
from co_tui.tui.terminal.notify import AttentionNeeded, notify_unfocused
from co_tui.tui.terminal.theme_memory import remember_theme, remembered_theme
from co_tui.tui.widgets.prompt import PromptHistory
from co_tui.tui.widgets.welcome import first_launch, remember_launch

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pydantic_ai import DeferredToolRequests
    from textual.driver import Driver

    from co_tui.agent.build import AgentBundle
    from co_tui.config.settings import Settings
    from co_tui.config.trust import LoadedSettings, ProjectTrust, ProjectView
    from co_tui.context.deps import CoDeps
    from co_tui.session.chat import ChatSession
    from co_tui.store.drafts import StoredDraft
    from co_tui.store.records import LoadedSession
    from co_tui.store.session_store import SessionStore
    from co_tui.tui.draft_keeper import DraftKeeper
    from co_tui.tui.frontend import TuiFrontend

    # How co-tui loads its settings (with the project they come from); raises SettingsError.
    SettingsLoader = Callable[[], LoadedSettings]

_DEFAULT = object()
BUSY_GROUPS = ("turn", "command", "session")  # workers a queued message waits for
VISIBLE_ITEMS = 40  # transcript items built at once when a stored session opens
EXIT_SETTINGS_ERROR = 2  # as the command line's usage errors


def css_paths() -> list[Path]:
    """styles/*.tcss: inside the installed package (wheel), else at the repository root."""
    here = Path(__file__).resolve()
    for candidate in (here.parent.parent / "styles", here.parents[3] / "styles"):
        if candidate.is_dir():
            return sorted(candidate.glob("*.tcss"))
    return []


async def _import_in_thread(*modules: str) -> None:
    """Import `modules` off the UI thread: what is typed meanwhile is echoed at once."""
    for module in modules:
        await asyncio.to_thread(importlib.import_module, module)


def bang_no_network(what: str) -> str:
    """After a `!cmd` that failed for lack of network: what was seen, and the ways to allow it."""
    return (
        f'no network: the sandbox gives commands none (sandbox_network "none") and {what}. '
        "To let one command reach it, ask the assistant to run it and approve it with "
        'network (w) in the dialog; sandbox_network "bridge" in your settings gives '
        "Docker's session container one"
    )


class CoApp(App[None]):
    TITLE = "co-tui"
    CSS_PATH = css_paths()  # type: ignore[assignment]
    COMMANDS = App.COMMANDS | {SlashCommandProvider}
    frontend: TuiFrontend  # made with the session
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
        super().__init__()
        self.project = project  # the project's files, and what waits for the user's trust
        self._problems = list(problems)
        self.load_error: str | None = None
        self.settings_error: str | None = None  # why the settings could not be loaded
        self._continue_latest = continue_latest
        self._resume = resume
        self._loaded = asyncio.Event()
        self._turn_worker: Worker[None] | None = None
        path = user_data_dir() / "history" if history_path is _DEFAULT else history_path
        self._history_path = path if isinstance(path, Path) else None
        self.prompt_history = PromptHistory()  # its file is opened with the session
        self.first_launch = first_launch(user_data_dir())
        self._load_settings = settings if callable(settings) else None
        verbose = False if callable(settings) else settings.verbose
        self.chat = ChatScreen(
            self.prompt_history, show_thinking=verbose, first_launch=self.first_launch
        )
        self._session: ChatSession | None = None
        self._session_made = asyncio.Event()
        if not callable(settings):
            self._make_session(settings, session_store, bundle, deps)
        self.idle_gc = IdleCollector(self)
        self.stop_signals = StopSignals(self.stop_for_signal)

    @property
    def session(self) -> ChatSession:
        """The session: made with the app, or just after the first frame (`made_session`)."""
        if self._session is None:
            raise RuntimeError("the session is made once the settings are loaded")
        return self._session

    @property
    def made_session(self) -> ChatSession | None:
        """The session, or None before the settings are loaded (or when they could not be)."""
        return self._session

    async def wait_session(self) -> ChatSession:
        await self._session_made.wait()
        return self.session

    def _make_session(
        self,
        settings: Settings,
        store: SessionStore | None = None,
        bundle: AgentBundle | None = None,
        deps: CoDeps | None = None,
        view: ProjectView | None = None,
    ) -> None:
        """`view`: the project's files as loaded with the settings (the trust decision, once
        settled, decides how the session reads them)."""
        # The session's modules (and the turn events) are not the first frame's to load.
        from co_tui.session.chat import ChatSession
        from co_tui.tui.frontend import TuiFrontend

        self.frontend = TuiFrontend(self.chat)
        if view is None and self.project is not None:
            view = self.project.view
        self._session = ChatSession(
            settings, frontend=self.frontend, store=store, bundle=bundle, deps=deps, project=view
        )
        if self._history_path is not None:  # after the settings: their secrets are known
            self.prompt_history.open(self._history_path)
        self._keep_drafts()
        self._session_made.set()

    def _keep_drafts(self) -> None:
        """The prompt's draft, kept in the data folder under the session open at the time."""
        from co_tui.store.drafts import DraftStore
        from co_tui.tui.draft_keeper import DraftKeeper

        def warn(message: str) -> None:
            self.notify(message, severity="warning", timeout=6)

        session = self.session
        store = DraftStore(user_data_dir())
        self.chat.drafts = DraftKeeper(store, lambda: session.session_id, session.workspace, warn)

    @property
    def settings(self) -> Settings:
        return self.session.settings

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        if driver.__module__ == "textual.drivers.linux_driver":  # a terminal: it may hang up
            from co_tui.tui.terminal.driver import HangupSafeDriver

            return HangupSafeDriver
        return driver

    # -- start-up --
    def on_unmount(self) -> None:
        self.chat.save_draft()  # what was typed since the last save
        self.stop_signals.uninstall()
        self.idle_gc.uninstall()

    def get_default_screen(self) -> ChatScreen:
        return self.chat

    def on_mount(self) -> None:
        self.stop_signals.install()
        self.idle_gc.install()
        self.app_resume_signal.subscribe(self, self._redraw_after_suspend)
        if self._session is not None:
            self._apply_settings()
        else:  # the first frame, in the theme the settings chose last time
            self._use_theme(remembered_theme(user_data_dir()))
        self.refresh_status()
        if self.first_launch:
            remember_launch(user_data_dir())
        self.call_after_refresh(self._after_first_frame)

    def _apply_settings(self) -> None:
        """What the settings change on screen: the theme, the thinking view."""
        if self._use_theme(self.settings.theme):
            remember_theme(user_data_dir(), self.settings.theme)
        self.chat.sidebar.show_thinking = self.settings.verbose

    def _use_theme(self, name: str | None) -> bool:
        if name is None or name not in self.available_themes:
            return False
        self.theme = name
        return True

    def _after_first_frame(self) -> None:
        self.idle_gc.first_frame()
        if self._load_settings is not None:
            self._start_with_settings(self._load_settings)
        else:
            self._load()

    @work(group="startup")
    async def _start_with_settings(self, load: SettingsLoader) -> None:
        """Load the settings in a thread (keys typed meanwhile are echoed at once; what is
        sent waits for the session), make the session, then load the rest; on a settings
        error, end the app with its message. Any other error ends the app, as a bug."""
        self._load_settings = None
        try:
            loaded = await asyncio.to_thread(load)
        except Exception as exc:
            from co_tui.config.settings import SettingsError  # loaded by now, by `load`

            if not isinstance(exc, SettingsError):
                raise
            self.settings_error = str(exc)
            self.exit(return_code=EXIT_SETTINGS_ERROR)
            return
        self.project = loaded.project
        self._problems += loaded.problems
        await _import_in_thread("co_tui.session.chat", "co_tui.tui.frontend")
        self._make_session(loaded.settings, view=loaded.view)
        self._apply_settings()
        self.refresh_status()
        self._load()

    def _notice(self, message: str, level: str = "info") -> None:
        self.chat.post_message(Notice(message, level))

    @work(group="startup", exit_on_error=False)
    async def _load(self) -> None:
        session = self.session
        for problem in self._problems:
            self._notice(problem, "warning")
        loaded: LoadedSession | None = None
        draft_back = False  # the draft comes back whatever else fails
        try:
            await self._settle_trust()
            await asyncio.to_thread(session.read_project)
            await self._load_custom_commands()
            loaded = await self._open_stored()
            await asyncio.to_thread(session.build)
            if session.telemetry_off:
                self._notice(session.telemetry_off, "warning")
            # The answers' Markdown renderer and the slash commands, loaded here off the UI
            # thread, after the first frame: the first answer, and the first "/" typed, do
            # not pay for them (the commands bring the settings and telemetry modules).
            await _import_in_thread(
                "co_tui.tui.render.markdown", "co_tui.session.commands.builtins"
            )
            assert session.deps is not None
            self.chat.picker.workspace = session.deps.workspace  # where @ mentions are listed
            self.chat.picker.vault = session.deps.obsidian_vault_path
            if warning := session.deps.sandbox_warning:
                self._notice(warning, "warning")
            if loaded is not None:
                self._show_restored(loaded)
            elif self._resume == "":
                self.open_picker()
            draft_back = True
            await self._bring_back_draft(resumed=loaded is not None)
            await session.start_model(self._model_progress)
            if self.settings.mcp_servers:
                mcp_ready = asyncio.Event()
                self._hold_mcp(mcp_ready)
                await mcp_ready.wait()
        except Exception as exc:  # a provider or sandbox that cannot be used: say so
            from co_tui.sandbox import SandboxError

            self.load_error = str(exc)
            sandbox = isinstance(exc, SandboxError)
            what = "the sandbox cannot start" if sandbox else "cannot start the model"
            self._notice(f"{what}: {exc}", "error")
            if not draft_back:
                await self._bring_back_draft(resumed=loaded is not None)
        finally:
            self._loaded.set()
            self.refresh_status()
            self.idle_gc.idle_soon()

    async def _open_stored(self) -> LoadedSession | None:
        """--continue / --resume ID, before the deps exist: they take the stored id."""
        if not (self._continue_latest or self._resume):
            return None
        from co_tui.store.errors import SessionError

        try:
            return await asyncio.to_thread(
                self.session.open_stored,
                continue_latest=self._continue_latest,
                resume=self._resume,
            )
        except SessionError as exc:
            self._notice(f"{exc}; starting a new session", "warning")
            return None

    async def _bring_back_draft(self, *, resumed: bool) -> None:
        """The draft kept for the session resumed; in a new session, the newest draft left
        in this folder by a session that was never stored (nothing of it was sent). Only
        then is the draft written: what was typed meanwhile must not replace it unread."""
        keeper = self.chat.drafts
        if keeper is None:
            return
        await self._find_draft(keeper, resumed=resumed)
        keeper.ready = True
        self.chat.save_draft()  # what is in the prompt now: brought back, typed since

    async def _find_draft(self, keeper: DraftKeeper, *, resumed: bool) -> None:
        from co_tui.store.drafts import DraftError

        session = self.session

        def find() -> StoredDraft | None:
            if resumed:
                return keeper.store.load(session.session_id)
            return keeper.store.unclaimed(session.workspace, self._is_stored)

        try:
            found = await asyncio.to_thread(find)
        except DraftError as exc:
            self._notice(str(exc), "warning")
            return
        if found is None or found.ours or found.writer_alive or found.draft.empty:
            return  # none, in the prompt already, or another co-tui window has it open
        if found.session_id != session.session_id:
            keeper.took_over(found.session_id)
        self.chat.restore_draft(found.draft)

    def _is_stored(self, session_id: str) -> bool:
        from co_tui.store.errors import SessionError, SessionNotFound

        try:
            self.session.store.info(session_id)
        except SessionNotFound:
            return False
        except SessionError:  # cannot tell: the draft is left where it is
            return True
        return True

    async def _ask_trust(self, project: ProjectTrust) -> ProjectTrust:
        """The trust dialog for these files; the answer is stored and becomes self.project."""
        from co_tui.tui.screens.trust import TrustScreen

        trusted = await self.push_screen_wait(TrustScreen(project))
        project = self.project = project.decide("trusted" if trusted else "declined")
        try:
            project.remember()
        except OSError as exc:
            self._notice(f"cannot store the decision: {exc}", "warning")
        return project

    def _use_project(self, project: ProjectTrust) -> None:
        """The prompt, skills and commands read the project through this view from now on."""
        self.session.project = project.view
        if self.session.deps is not None:
            self.session.deps.project = project.view

    async def _settle_trust(self) -> None:
        """Ask about a project the user has not decided on for these exact files (the
        answer is stored); trusted, it applies in full, else without what waits for trust
        (nothing of it starts; its instructions are read as untrusted text)."""
        from co_tui.config.trust import NOT_TRUSTED, what_it_would_do

        project = self.project
        if project is None:
            return
        if project.decision == "undecided":
            project = await self._ask_trust(project)
            if project.trusted:
                self.session.settings = project.trusted_settings
                self._notice("trusted: this project applies in full")
        self._use_project(project)
        if not project.trusted:
            held = what_it_would_do(project)
            self._notice(f"{NOT_TRUSTED}: {held} (/trust to trust it)", "warning")
        self.refresh_status()

    async def _load_custom_commands(self) -> None:
        """The user's /commands and, in a trusted project, the project's, then the skills
        (a /name each where no command has it); what was skipped is said once, here."""
        from co_tui.session import commands
        from co_tui.session.commands import custom as custom_commands
        from co_tui.session.commands import skill_commands

        project = self.session.project
        loaded = await asyncio.to_thread(custom_commands.load, project, builtins=commands.COMMANDS)
        taken = {*commands.COMMANDS, *loaded.commands}
        skills = await asyncio.to_thread(skill_commands.load, project, taken)
        self.chat.custom_commands = {**loaded.commands, **skills}
        for problem in loaded.problems:
            self._notice(problem, "warning")

    def _model_progress(self, update: Any) -> None:
        """The embedded model's server loading, in the status bar; done, in the transcript."""
        if update.done:
            self.chat.note = ""
            self._notice(update.message)
        else:
            self.chat.note = f"{update.message} {update.elapsed_s:.1f}s"

    @work(group="mcp", exit_on_error=False)
    async def _hold_mcp(self, ready: asyncio.Event) -> None:
        """The MCP servers, held for the session by this worker (the stdio transports must
        open and close in one task); it is cancelled when the app exits."""
        from co_tui.agent.mcp import failure_note, mcp_status_summary
        from co_tui.integrations.mcp import MCPConnection

        def connected(connection: MCPConnection | None) -> None:
            if connection is not None:
                for failure in connection.failures:
                    level = "warning" if failure.tool is not None else "error"
                    self._notice(failure_note(failure), level)
                self.chat.mcp = mcp_status_summary(connection)
            ready.set()

        try:
            await self.session.hold_mcp(connected)
        finally:
            ready.set()

    async def wait_ready(self) -> bool:
        await self._loaded.wait()
        return self.session.ready

    @property
    def session_id(self) -> str:
        return self.session.session_id

    # -- status --
    def model_label(self) -> str:
        if self._session is None or self._session.bundle is None:
            return "loading model…" if self.load_error is None else "no model"
        return self.session.model_label()

    def refresh_status(self) -> None:
        chat = self.chat
        chat.model = self.model_label()
        bundle = self._session.bundle if self._session is not None else None
        resolved = bundle.resolved if bundle is not None else None
        chat.welcome.local_model = resolved is not None and resolved.provider == "local"
        if self._session is None:  # the first frame: the settings load right after it
            chat.sandbox = chat.isolation = "…"
            return
        from co_tui.config.trust import NOT_TRUSTED

        deps = self.session.deps
        untrusted = self.project is not None and not self.project.trusted
        warnings = [NOT_TRUSTED if untrusted else "", (deps.sandbox_warning or "") if deps else ""]
        chat.sandbox = deps.sandbox.name if deps else "…"
        chat.isolation = deps.sandbox.isolation_level if deps else "…"
        isolating = deps is not None and deps.sandbox.isolation_level != "none"
        chat.network = deps.sandbox.network.mode if deps and isolating else ""
        chat.yolo = self.session.approve_all
        chat.warning = "; ".join(w for w in warnings if w)
        chat.turn_tokens = self.session.turn_tokens
        chat.session_tokens = self.session.session_tokens
        chat.context_tokens = self.session.totals.context_tokens
        chat.context_window = self.session.context_window() or 0
        chat.cost = format_cost(self.session.totals.cost)

    # -- what the chat screen asks for --
    @on(Submitted)
    def _submitted(self, message: Submitted) -> None:
        self.start_turn(message.prompt)

    @on(ShellRequested)
    def _shell_requested(self, message: ShellRequested) -> None:
        self._turn_worker = self._run_bang(message.command)

    @on(CommandRequested)
    def _command_requested(self, message: CommandRequested) -> None:
        self.run_command(message.text)

    @on(CancelRequested)
    def _cancel_requested(self) -> None:
        self.cancel_turn()

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

    # -- turns --
    @property
    def turn_running(self) -> bool:
        return self._turn_worker is not None and not self._turn_worker.is_finished

    @property
    def busy(self) -> bool:
        """A turn, `!cmd`, /command or session switch runs: what the user sends now waits."""
        return any(w.group in BUSY_GROUPS and not w.is_finished for w in self.workers)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group in BUSY_GROUPS:
            self.chat.busy = self.busy
            self.chat.turn_running = self.turn_running

    def start_turn(self, prompt: str) -> None:
        self._turn_worker = self._run_turn(prompt)

    def cancel_turn(self) -> None:
        """Stop the running turn. What was queued behind it is not sent: it comes back into
        the prompt, since the user who stops a turn may no longer want what followed."""
        from co_tui.tui.screens.approval import ApprovalScreen

        if isinstance(self.screen, ApprovalScreen):
            self.screen.dismiss(None)
        if self._turn_worker is not None:
            self._turn_worker.cancel()
        self.chat.prompt.take_back_all()

    def action_cancel_turn(self) -> None:
        self.cancel_turn()

    def stop_for_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP: cancel the turn as Ctrl+C does, wait until it is saved and its
        commands are gone, then exit with 128 + signum."""
        self.run_worker(self._exit_after_turn(exit_code_for(signum)), group="exit")

    async def _exit_after_turn(self, code: int) -> None:
        from textual.worker import WorkerError

        worker = self._turn_worker
        self.cancel_turn()
        if worker is not None:
            with contextlib.suppress(WorkerError):
                await worker.wait()
        self.exit(return_code=code)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def _run_turn(self, prompt: str, pending: DeferredToolRequests | None = None) -> None:
        self.idle_gc.busy()
        try:
            await self._turn_body(prompt, pending)
        finally:
            self.idle_gc.idle_soon()

    def resume_pending(self, pending: DeferredToolRequests) -> None:
        """A reopened session was waiting for approval: ask again, then continue the run."""
        self._turn_worker = self._run_turn("", pending)

    async def _turn_body(self, prompt: str, pending: DeferredToolRequests | None) -> None:
        started = time.monotonic()
        ended = "the answer is ready"
        try:
            if not await self.wait_ready():
                ended = "the turn could not start"
                if self.session.deps is not None:  # the model could not start: said once, at start
                    self._notice("No model to answer: choose one with /model.", "error")
                else:
                    self._notice(f"cannot run a turn: {self.load_error}", "error")
                return
            if pending is None:
                await self.session.run(prompt)
            else:
                await self.session.resume_pending(pending)
        except asyncio.CancelledError:
            ended = "the turn was interrupted"
            self._notice("interrupted", "warning")
        except Exception as exc:  # a bug in a turn must leave the app usable
            ended = "the turn failed"
            self._notice(f"the turn failed: {type(exc).__name__}: {exc}", "error")
        finally:
            self.chat.note = ""
            self.refresh_status()
            elapsed = time.monotonic() - started
            if self._session is not None and elapsed >= self.settings.notify_after_s:
                self.post_message(AttentionNeeded(f"{ended} (after {elapsed:.0f} s)"))

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def _run_bang(self, cmd: str) -> None:
        """`!cmd`: a command in the sandbox, outside any turn, shown as a tool call. One that
        failed for lack of network says so, and how to allow it."""
        from co_tui.protocol import events as ev
        from co_tui.sandbox.offline import offline_failure
        from co_tui.tools.live_output import LiveOutput

        session = await self.wait_session()  # a `!cmd` typed ahead of the first frame
        call = ev.ToolCall(
            session_id=session.session_id,
            tool_call_id="bang",
            tool_name="!",
            args={"cmd": cmd},
            key_arg=cmd,
        )
        self.frontend.emit(call)

        def result(status: ev.ToolStatus, content: str, duration: float | None = None) -> None:
            self.frontend.emit(
                ev.ToolResult(
                    session_id=call.session_id,
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    status=status,
                    content=content,
                    duration_s=duration,
                )
            )

        started = time.monotonic()
        try:
            deps = self.session.deps
            if not await self.wait_ready() and deps is None:
                result("failed", f"no sandbox: {self.load_error}")
                return
            assert self.session.deps is not None
            timeout = self.session.deps.sandbox_max_timeout
            sandbox = self.session.deps.sandbox
            live = LiveOutput(self.frontend, call.session_id, call.tool_call_id)
            outcome = await sandbox.run_command(cmd, timeout=timeout, on_output=live)
            ok = outcome.exit_code == 0 and not outcome.timed_out
            duration = time.monotonic() - started
            text = outcome.for_model(timeout)
            if sandbox.network.mode == "none" and (failed := offline_failure(cmd, outcome)):
                text += f"\n[{bang_no_network(failed.what())}]"
            result("ok" if ok else "failed", text, duration)
        except asyncio.CancelledError:
            result("interrupted", "")
        except Exception as exc:
            result("failed", f"{type(exc).__name__}: {exc}")

    # -- slash commands --
    def run_command(self, text: str) -> None:
        self._run_command(text)

    @work(group="command", exit_on_error=False)
    async def _run_command(self, text: str) -> None:
        from co_tui.session import commands

        ready = await self.wait_ready()
        session = self.session
        if not ready and not session.ready:
            name, _, arg = text.strip().partition(" ")
            if name == "/model" and session.deps is not None:
                await self._model_without_agent(arg.strip())
                return
            if name == "/setup" and session.deps is not None:
                self.open_setup()
                return
            self._notice(f"not available: {self.load_error}", "error")
            return
        assert session.deps is not None and session.bundle is not None
        shown: list[object] = []  # shown after the command, so /new's note is in the new transcript
        ctx = commands.CommandContext(
            message_history=session.history,
            deps=session.deps,
            bundle=session.bundle,
            settings=session.settings,
            show=shown.append,
            replace_bundle=self._replace_bundle,
            session_tokens=session.session_tokens,
            usage=session.totals,
            last_answer=session.last_answer,
            copy_to_clipboard=self._copy,
            open_spans=self.open_spans,
            find_in_transcript=self.chat.open_find,
            resume_session=self.open_session,
            choose_model=self.open_model_picker,
            set_up_provider=self.open_setup,
            exit_app=self.exit,
            export_session=self._export,
            trust_project=self._trust_project,
            session_id=session.session_id,
            custom=self.chat.custom_commands,
        )
        try:
            outcome = await commands.dispatch(ctx, text)
            if not outcome.known:
                self._notice(outcome.hint or "unknown command", "warning")
                return
            if outcome.history is not None:
                await session.replace_history(outcome.history)
                if not outcome.history:
                    self.chat.post_message(ConversationCleared())
            else:
                await session.save()  # what a command changed outside the history (/compact)
        except Exception as exc:
            self._notice(f"{text}: {type(exc).__name__}: {exc}", "error")
        finally:
            for content in shown:
                self.show_output(content)
            self.refresh_status()

    async def _export(self, name: str) -> str:
        """/export [file]: the session as Markdown, in the data folder's exports by default."""
        from co_tui.safety.visible import visible
        from co_tui.session.export import session_markdown, write_export
        from co_tui.store.errors import SessionError
        from co_tui.store.records import Note as StoredNote

        session = self.session
        if not session.history:
            return "Nothing to export yet: this session has no turns."
        notes: list[StoredNote] = []
        try:
            decisions = await asyncio.to_thread(session.store.decisions, session.session_id)
            notes = (await asyncio.to_thread(session.store.load, session.session_id)).notes
        except SessionError:
            decisions = {}  # never stored: nothing was decided ahead of a run
        text = session_markdown(
            session.history,
            session.session_id,
            compactions=session.window.compactions,
            decisions=decisions,
            header={"model": session.model_label()},
            redactor=session.store.redactor,
            notes=notes,
        )
        # Escaped as `co-tui sessions export` writes it: `cat` on the file replays nothing.
        shown = visible(text, keep="\n\t")
        written = await asyncio.to_thread(
            write_export, shown, name, session.workspace, session.session_id
        )
        where = "" if name else " (your data folder's exports, readable by you only)"
        return f"Exported this session to {written.resolve()}{where}"

    async def _trust_project(self) -> str:
        """/trust: the project's files read again and shown in the trust dialog; the answer
        is stored. Trusted, its instructions, commands and skills apply at once; its settings
        (they choose the sandbox, the servers, the providers) from the next start."""
        from co_tui.config.trust import load_project_settings

        root = self.project.root if self.project is not None else self.session.workspace
        loaded = await asyncio.to_thread(load_project_settings, root)
        project = loaded.project
        if project is None:
            return "This project ships nothing for co-tui that needs your trust."
        project = await self._ask_trust(project)
        self._use_project(project)
        await self._load_custom_commands()
        self.refresh_status()
        if not project.trusted:
            return "Not trusted: what it would change waits; its instructions are untrusted text."
        fields = type(project.trusted_settings).model_fields
        later = (
            " Its settings apply from the next start."
            if any(w.setting in fields for w in project.widenings)
            else ""
        )
        return f"Trusted: its instructions, commands and skills apply now.{later}"

    def show_output(self, content: object) -> None:
        self.chat.post_message(CommandOutput(content))

    def _replace_bundle(self, bundle: AgentBundle, settings: Settings) -> None:
        self.session.switch_model(bundle, settings)
        self.refresh_status()

    # -- /model: the model picker --
    async def _model_without_agent(self, choice: str) -> None:
        """/model when no model could start: the picker, or a switch that builds the agent
        (the slash commands need one)."""
        if not choice:
            self.open_model_picker()
            return
        from co_tui.agent.build import build_agent
        from co_tui.llm.model_list import switched_settings

        settings = switched_settings(self.session.settings, choice)
        if settings is None:
            self._notice("No model is running: choose one with /model (or /model provider:NAME).")
            return
        try:
            bundle = await asyncio.to_thread(build_agent, settings)
            self.session.switch_model(bundle, settings)
            await asyncio.to_thread(self.session.build)  # the recorder and telemetry it skipped
            self.load_error = None
            self._notice(f"Model switched to {self.session.model_label()}.")
            await self.session.start_model(self._model_progress)
        except Exception as exc:  # a provider or local server that cannot be used: say so
            self._notice(f"cannot switch to {choice}: {exc}", "error")
        finally:
            self.refresh_status()

    def open_model_picker(self) -> None:
        from co_tui.tui.screens.model_picker import ADD_PROVIDER, ModelPickerScreen

        def chosen(choice: str | None) -> None:
            if choice == ADD_PROVIDER:
                self.open_setup()
            elif choice:
                self.run_command(f"/model {choice}")

        resolved = self.session.bundle.resolved if self.session.bundle else None
        current = f"{resolved.provider}:{resolved.model_name}" if resolved else ""
        self.push_screen(ModelPickerScreen(self.session.settings, current), chosen)

    def open_setup(self) -> None:
        """/setup: a provider set up and tested in a dialog; the session switches to it."""
        from co_tui.tui.screens.setup import SetupDone, SetupScreen

        def done(result: SetupDone | None) -> None:
            if result is None:
                return
            self.session.settings = result.settings  # the saved credentials, for /model
            self._notice(f"Saved. Switching to {result.choice}.")
            self.run_command(f"/model {result.choice}")

        self.push_screen(SetupScreen(self.session.settings), done)

    # -- stored sessions: /resume and the sessions screen --
    def open_session(self, session_id: str) -> None:
        """/resume [id]: '' shows the list."""
        if session_id:
            self.run_worker(self._switch(session_id), group="session", exit_on_error=False)
        else:
            self.open_picker()

    def open_picker(self) -> None:
        from co_tui.tui.screens.sessions import SessionsScreen

        def chosen(session_id: str | None) -> None:
            if session_id:
                self.run_worker(self._switch(session_id), group="session", exit_on_error=False)

        here, current = str(self.session.workspace), self.session.session_id
        self.push_screen(SessionsScreen(self.session.store, here, current), chosen)

    def on_current_session_deleted(self) -> None:
        """The sessions screen deleted the conversation open here: go on in a new, empty
        session, so the deleted one is never saved again."""
        self.run_worker(self._start_over_after_delete(), group="session", exit_on_error=False)

    async def _start_over_after_delete(self) -> None:
        if self.turn_running:  # its last checkpoint would store the deleted session again
            assert self._turn_worker is not None
            self._turn_worker.cancel()
            with contextlib.suppress(Exception):
                await self._turn_worker.wait()
        await self.session.replace_history([])
        self.chat.post_message(ConversationCleared())
        self._notice("Deleted the session that was open; this is a new, empty session.")

    async def _switch(self, session_id: str) -> None:
        from co_tui.store.errors import SessionError

        if self.turn_running:
            self._notice("finish or cancel the running turn first", "warning")
            return
        store = self.session.store
        try:
            info = await asyncio.to_thread(store.resolve, session_id)
            loaded = await asyncio.to_thread(store.load, info.id)
        except SessionError as exc:
            self._notice(str(exc), "error")
            return
        await self.session.switch_to(loaded)
        self._show_restored(loaded)
        await self._bring_back_draft(resumed=True)

    def _show_restored(self, loaded: LoadedSession) -> None:
        """The stored conversation, through the same events as a live one; a call that was
        waiting for approval is asked about again."""
        from co_tui.protocol import events as ev
        from co_tui.turn.replay import replay

        sid = self.session.session_id
        compactions = self.session.window.compactions
        events = list(replay(self.session.history, sid, compactions, loaded.notes))
        if notice := loaded.unfinished_notice():
            events.append(ev.Status(session_id=sid, message=notice, level="warning"))
        self.chat.post_message(TranscriptRestored(events, VISIBLE_ITEMS))
        self.chat.note = f"resumed: {loaded.info.title or loaded.info.id[:8]}"
        self.refresh_status()
        if loaded.pending is not None:
            self.resume_pending(loaded.pending)

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
        self.open_spans()

    def open_spans(self, span_filter: str = "") -> None:
        from co_tui.tui.screens.spans import SpanScreen

        if not isinstance(self.screen, SpanScreen):
            self.push_screen(SpanScreen(initial_filter=span_filter))

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

    def _copy(self, text: str) -> None:
        self.copy_to_clipboard(text)

    def copy_last_answer(self) -> None:
        answer = self._session.last_answer if self._session is not None else ""
        if not answer:
            self.notify("Nothing to copy yet.", timeout=2)
            return
        self.copy_to_clipboard(answer, "the last answer")
