"""The app's side of durable sessions: which session is recorded, opening and switching
sessions, and restoring a transcript (visible part first) and a pending approval.

CoApp owns one SessionController; the store is only touched from threads.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # co_tui.sessions imports pydantic-ai: never before the first frame
    from co_tui.sessions import LoadedSession, SessionRecorder, SessionStore
    from co_tui.tui.app import CoApp

VISIBLE_ITEMS = 40  # transcript items built at once when a session opens


class SessionController:
    def __init__(
        self,
        app: CoApp,
        store: SessionStore | None = None,
        *,
        continue_latest: bool = False,
        resume: str | None = None,
    ) -> None:
        self.app = app
        self._store = store
        self.continue_latest = continue_latest
        self.resume = resume
        self.recorder: SessionRecorder | None = None

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            from co_tui.sessions import SessionStore

            self._store = SessionStore(secrets=self.app.settings.secret_values())
        return self._store

    @property
    def cwd(self) -> Path:
        deps = self.app.deps
        return deps.workspace if deps is not None else Path.cwd()

    # -- start-up --
    async def start(self) -> None:
        """After the agent and deps exist: open what --continue/--resume asked for."""
        from co_tui.sessions import SessionError, SessionRecorder, open_session
        from co_tui.tui.widgets.transcript import Note

        self.recorder = SessionRecorder(self.store, model=self.app.model_label(), cwd=self.cwd)
        if self.resume == "":
            self.open_picker()
            return
        if not (self.continue_latest or self.resume):
            return
        try:
            loaded = await asyncio.to_thread(
                open_session, self.store, self.cwd,
                continue_latest=self.continue_latest, resume=self.resume,
            )  # fmt: skip
        except SessionError as exc:
            self.app.chat.transcript.add(Note(f"{exc}; starting a new session", "warning"))
            return
        if loaded is not None:
            self.restore(loaded)

    def restore(self, loaded: LoadedSession) -> None:
        from co_tui.sessions import SessionRecorder
        from co_tui.tui.restore import transcript_factories

        app = self.app
        self.recorder = SessionRecorder.resume(self.store, loaded, model=app.model_label())
        if app.deps is not None:  # approve-all chosen in another session does not carry over
            app.deps.auto_confirm = app.settings.auto_confirm
        app.refresh_status()
        app.history = list(loaded.messages)
        app.last_answer = ""
        app.chat.transcript.clear_all()
        app.chat.transcript.load_items(transcript_factories(loaded.messages), VISIBLE_ITEMS)
        app.chat.status_bar.set(note=f"resumed: {loaded.info.title or loaded.info.id[:8]}")
        if loaded.pending is not None:
            app.resume_pending(loaded.pending)

    # -- turns and commands --
    def begin_turn(self, prompt: str) -> None:
        if self.recorder is not None:
            self.recorder.begin_turn(prompt)

    @property
    def checkpoint(self) -> Any:
        return self.recorder.checkpoint if self.recorder is not None else None

    async def history_replaced(self, history: list[Any]) -> None:
        """A command rebound the history: /clear starts a new session, /compact saves."""
        if self.recorder is None:
            return
        if not history:
            self.recorder.start_new()
            return
        await asyncio.to_thread(self.recorder.save, history)

    # -- /resume and the sessions screen --
    def open(self, session_id: str) -> None:
        """/resume [id]: '' shows the list."""
        if session_id:
            self.app.run_worker(self.switch(session_id), group="session", exit_on_error=False)
        else:
            self.open_picker()

    def open_picker(self) -> None:
        from co_tui.tui.screens.sessions import SessionsScreen

        def chosen(session_id: str | None) -> None:
            if session_id:
                self.app.run_worker(self.switch(session_id), group="session", exit_on_error=False)

        self.app.push_screen(SessionsScreen(self.store, str(self.cwd)), chosen)

    async def switch(self, session_id: str) -> None:
        from co_tui.sessions import SessionError
        from co_tui.tui.widgets.transcript import Note

        app = self.app
        if app.turn_running:
            app.chat.transcript.add(Note("finish or cancel the running turn first", "warning"))
            return
        try:
            info = await asyncio.to_thread(self.store.resolve, session_id)
            loaded = await asyncio.to_thread(self.store.load, info.id)
        except SessionError as exc:
            app.chat.transcript.add(Note(str(exc), "error"))
            return
        self.restore(loaded)
