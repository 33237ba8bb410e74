"""The app's start: the first frame before anything heavy, then the settings, the session,
the project's trust, the commands, the stored session to reopen, the agent and sandbox, the
model and the MCP servers, in that order.

`co-tui` itself gives the app a way to load its settings rather than the settings: they are
read and validated in a thread right after the first frame (pydantic and the settings
sources took 0.1-0.2 s before it), then the session is made; keys typed meanwhile are echoed
at once, and what is sent waits for it. A settings error ends the app with exit code 2 and
its message (`settings_error`). The agent (pydantic-ai, provider SDKs) and the sandbox are
built in a worker after that. In a project whose settings would widen what co-tui may do
(co_tui.config.trust), that worker first asks whether to trust it (once per settings file),
before anything those settings would start.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING

from co_tui.config.paths import user_data_dir
from co_tui.tui.shell.command_runner import load_custom_commands
from co_tui.tui.terminal.theme_memory import remember_theme, remembered_theme

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from co_tui.agent.build import AgentBundle
    from co_tui.config.settings import Settings
    from co_tui.config.trust import LoadedSettings, ProjectView
    from co_tui.context.deps import CoDeps
    from co_tui.store.records import LoadedSession
    from co_tui.store.session_store import SessionStore
    from co_tui.tui.shell.app_base import AppBase
    from co_tui.tui.shell.model_choice import ModelChoice
    from co_tui.tui.shell.project_trust import ProjectTrustKeeper
    from co_tui.tui.shell.session_switcher import SessionSwitcher
    from co_tui.tui.widgets.prompt import PromptHistory

    # How co-tui loads its settings (with the project they come from); raises SettingsError.
    SettingsLoader = Callable[[], LoadedSettings]

EXIT_SETTINGS_ERROR = 2  # as the command line's usage errors


async def _import_in_thread(*modules: str) -> None:
    """Import `modules` off the UI thread: what is typed meanwhile is echoed at once."""
    for module in modules:
        await asyncio.to_thread(importlib.import_module, module)


class Startup:
    def __init__(
        self,
        app: AppBase,
        *,
        load_settings: SettingsLoader | None,
        prompt_history: PromptHistory,
        history_path: Path | None,
        problems: list[str],
        continue_latest: bool,
        resume: str | None,
        trust: ProjectTrustKeeper,
        sessions: SessionSwitcher,
        models: ModelChoice,
    ) -> None:
        """`load_settings`: how to load them once the first frame is drawn (None: the
        session is made with the app); `problems`: project files that could not be read,
        said once the session loads; `resume` '' opens the sessions screen."""
        self.app = app
        self._load_settings = load_settings
        self.prompt_history = prompt_history  # its file is opened with the session
        self._history_path = history_path
        self._problems = problems
        self._continue_latest = continue_latest
        self._resume = resume
        self.trust = trust
        self.sessions = sessions
        self.models = models

    def make_session(
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

        app = self.app
        frontend = TuiFrontend(app.chat)
        if view is None and app.project is not None:
            view = app.project.view
        session = ChatSession(
            settings, frontend=frontend, store=store, bundle=bundle, deps=deps, project=view
        )
        if self._history_path is not None:  # after the settings: their secrets are known
            self.prompt_history.open(self._history_path)
        self.sessions.keep_drafts(session)
        app.use_session(session, frontend)

    def first_frame(self) -> None:
        """On mount: the theme, then the rest once the first frame is drawn."""
        app = self.app
        if app.made_session is not None:
            self.apply_settings()
        else:  # the first frame, in the theme the settings chose last time
            self._use_theme(remembered_theme(user_data_dir()))
        app.refresh_status()
        app.call_after_refresh(self._after_first_frame)

    def apply_settings(self) -> None:
        """What the settings change on screen: the theme, the thinking view."""
        settings = self.app.settings
        if self._use_theme(settings.theme):
            remember_theme(user_data_dir(), settings.theme)
        self.app.chat.sidebar.show_thinking = settings.verbose

    def _use_theme(self, name: str | None) -> bool:
        if name is None or name not in self.app.available_themes:
            return False
        self.app.theme = name
        return True

    def _after_first_frame(self) -> None:
        self.app.idle_gc.first_frame()
        if self._load_settings is not None:
            load, self._load_settings = self._load_settings, None
            # As a bug, an error other than the settings' ends the app.
            self.app.run_worker(self._start_with_settings(load), name="start", group="startup")
        else:
            self._start_loading()

    def _start_loading(self) -> None:
        self.app.run_worker(self._load(), name="load", group="startup", exit_on_error=False)

    async def _start_with_settings(self, load: SettingsLoader) -> None:
        """Load the settings in a thread (keys typed meanwhile are echoed at once; what is
        sent waits for the session), make the session, then load the rest; on a settings
        error, end the app with its message. Any other error ends the app, as a bug."""
        app = self.app
        try:
            loaded = await asyncio.to_thread(load)
        except Exception as exc:
            from co_tui.config.settings import SettingsError  # loaded by now, by `load`

            if not isinstance(exc, SettingsError):
                raise
            app.settings_error = str(exc)
            app.exit(return_code=EXIT_SETTINGS_ERROR)
            return
        app.project = loaded.project
        self._problems += loaded.problems
        await _import_in_thread("co_tui.session.chat", "co_tui.tui.frontend")
        self.make_session(loaded.settings, view=loaded.view)
        self.apply_settings()
        app.refresh_status()
        self._start_loading()

    async def _load(self) -> None:
        app = self.app
        session = app.session
        for problem in self._problems:
            app.notice(problem, "warning")
        loaded: LoadedSession | None = None
        draft_back = False  # the draft comes back whatever else fails
        try:
            await self.trust.settle()
            await asyncio.to_thread(session.read_project)
            await load_custom_commands(app)
            loaded = await self._open_stored()
            if loaded is not None:  # on screen at once: the sandbox and agent come after
                await _import_in_thread("co_tui.tui.render.markdown")
                await self.sessions.show_restored(loaded, at_start=True)
            await asyncio.to_thread(session.build)
            if session.telemetry_off:
                app.notice(session.telemetry_off, "warning")
            # The answers' Markdown renderer and the slash commands, loaded here off the UI
            # thread, after the first frame: the first answer, and the first "/" typed, do
            # not pay for them (the commands bring the settings and telemetry modules).
            await _import_in_thread(
                "co_tui.tui.render.markdown", "co_tui.session.commands.builtins"
            )
            assert session.deps is not None
            app.chat.picker.workspace = session.deps.workspace  # where @ mentions are listed
            app.chat.picker.vault = session.deps.obsidian_vault_path
            if warning := session.deps.sandbox_warning:
                app.notice(warning, "warning")
            if loaded is not None:
                self.sessions.ask_pending_again(loaded)
            elif self._resume == "":
                self.sessions.open_picker()
            draft_back = True
            await self.sessions.bring_back_draft(resumed=loaded is not None)
            await session.start_model(self.models.progress)
            if app.settings.mcp_servers:
                mcp_ready = asyncio.Event()
                holding = self._hold_mcp(mcp_ready)
                app.run_worker(holding, name="mcp", group="mcp", exit_on_error=False)
                await mcp_ready.wait()
        except Exception as exc:  # a provider or sandbox that cannot be used: say so
            from co_tui.sandbox import SandboxError

            app.load_error = str(exc)
            sandbox = isinstance(exc, SandboxError)
            what = "the sandbox cannot start" if sandbox else "cannot start the model"
            app.notice(f"{what}: {exc}", "error")
            if not draft_back:
                await self.sessions.bring_back_draft(resumed=loaded is not None)
        finally:
            app.loaded.set()
            app.refresh_status()
            app.idle_gc.idle_soon()

    async def _open_stored(self) -> LoadedSession | None:
        """--continue / --resume ID, before the deps exist: they take the stored id."""
        if not (self._continue_latest or self._resume):
            return None
        from co_tui.store.errors import SessionError

        try:
            return await asyncio.to_thread(
                self.app.session.open_stored,
                continue_latest=self._continue_latest,
                resume=self._resume,
            )
        except SessionError as exc:
            self.app.notice(f"{exc}; starting a new session", "warning")
            return None

    async def _hold_mcp(self, ready: asyncio.Event) -> None:
        """The MCP servers, held for the session by this worker (the stdio transports must
        open and close in one task); it is cancelled when the app exits."""
        from co_tui.agent.mcp import failure_note
        from co_tui.integrations.mcp import MCPConnection

        def connected(connection: MCPConnection | None) -> None:
            if connection is not None:
                for failure in connection.failures:
                    level = "warning" if failure.tool is not None else "error"
                    self.app.notice(failure_note(failure), level)
                self.app.refresh_status()  # the session holds the connection now
            ready.set()

        try:
            await self.app.session.hold_mcp(connected)
        finally:
            ready.set()
