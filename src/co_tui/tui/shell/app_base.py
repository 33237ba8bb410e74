"""What every room of the app works on: the chat screen, the one `ChatSession`, the
project and why nothing could start; saying something in the transcript; the status bar.

`CoApp` (app.py) is this plus the rooms it composes, each a module of its own: the start
(startup.py), the turns (turns.py), stored sessions (session_switcher.py), the project's
trust (project_trust.py), the model picker and setup (model_choice.py), and the slash
commands (command_runner.py, command_host.py). The rooms are given this base, never the
app, so none of them imports app.py.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.app import App

from co_tui.session.status import session_status
from co_tui.tui.messages import CommandOutput, Notice
from co_tui.tui.terminal.idle_gc import IdleCollector

if TYPE_CHECKING:
    from co_tui.config.settings import Settings
    from co_tui.config.trust import ProjectTrust
    from co_tui.session.chat import ChatSession
    from co_tui.tui.frontend import TuiFrontend
    from co_tui.tui.screens.chat import ChatScreen


class AppBase(App[None]):
    chat: ChatScreen  # made by the app, which knows what it shows
    frontend: TuiFrontend  # made with the session

    def __init__(self, project: ProjectTrust | None) -> None:
        super().__init__()
        self.project = project  # the project's files, and what waits for the user's trust
        self.load_error: str | None = None  # why the model or the sandbox could not start
        self.settings_error: str | None = None  # why the settings could not be loaded
        self.loaded = asyncio.Event()  # the start is over, whether or not it worked
        self.idle_gc = IdleCollector(self)
        self._session: ChatSession | None = None
        self._session_made = asyncio.Event()

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

    def use_session(self, session: ChatSession, frontend: TuiFrontend) -> None:
        self.frontend = frontend
        self._session = session
        self._session_made.set()

    async def wait_session(self) -> ChatSession:
        await self._session_made.wait()
        return self.session

    async def wait_ready(self) -> bool:
        await self.loaded.wait()
        return self.session.ready

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def settings(self) -> Settings:
        return self.session.settings

    def notice(self, message: str, level: str = "info") -> None:
        """A line in the transcript from the app itself."""
        self.chat.post_message(Notice(message, level))

    def show_output(self, content: object) -> None:
        """What a /command shows: Markdown text or a Rich renderable."""
        self.chat.post_message(CommandOutput(content))

    def model_label(self) -> str:
        if self._session is None or self._session.bundle is None:
            return "loading model…" if self.load_error is None else "no model"
        return self.session.model_label()

    def refresh_status(self) -> None:
        """The chat screen's status (the status bar, the welcome and the sidebar's totals bind
        to it), derived from the session now; the passing note stays."""
        was = self.chat.status
        self.chat.status = session_status(
            self.model_label(), self._session, self.project, note=was.note, inbox=was.inbox
        )
