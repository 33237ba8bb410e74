"""Stored sessions in the app: /resume (an id, or the sessions screen), a stored session
drawn again through the same events as a live one, going on in a new session when the open
one is deleted, and the prompt's draft that belongs to the session now open."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING

from co_tui.config.paths import user_data_dir
from co_tui.tui.messages import ConversationCleared, TranscriptRestored
from co_tui.tui.widgets.transcript import LOADED_ITEMS

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from typing import Any

    from co_tui.session.chat import ChatSession
    from co_tui.store.drafts import StoredDraft
    from co_tui.store.records import LoadedSession
    from co_tui.tui.shell.app_base import AppBase
    from co_tui.tui.shell.draft_keeper import DraftKeeper
    from co_tui.tui.shell.turns import Turns


class SessionSwitcher:
    def __init__(self, app: AppBase, turns: Turns) -> None:
        self.app = app
        self.turns = turns

    def _in_worker(self, work: Coroutine[Any, Any, None]) -> None:
        self.app.run_worker(work, group="session", exit_on_error=False)

    def open_session(self, session_id: str) -> None:
        """/resume [id]: '' shows the list."""
        if session_id:
            self._in_worker(self._switch(session_id))
        else:
            self.open_picker()

    def open_picker(self) -> None:
        from co_tui.tui.screens.sessions import SessionsScreen

        def chosen(session_id: str | None) -> None:
            if session_id:
                self._in_worker(self._switch(session_id))

        session = self.app.session
        here, current = str(session.workspace), session.session_id
        self.app.push_screen(SessionsScreen(session.store, here, current), chosen)

    def current_session_deleted(self) -> None:
        """The sessions screen deleted the conversation open here: go on in a new, empty
        session, so the deleted one is never saved again."""
        self._in_worker(self._start_over_after_delete())

    async def _start_over_after_delete(self) -> None:
        await self.turns.stop_quietly()  # its last checkpoint would store the deleted session
        await self.app.session.replace_history([])
        self.app.chat.post_message(ConversationCleared())
        self.app.notice("Deleted the session that was open; this is a new, empty session.")

    async def _switch(self, session_id: str) -> None:
        from co_tui.store.errors import SessionError

        if self.turns.running:
            self.app.notice("finish or cancel the running turn first", "warning")
            return
        store = self.app.session.store
        try:
            info = await asyncio.to_thread(store.resolve, session_id)
            loaded = await asyncio.to_thread(store.load, info.id)
        except SessionError as exc:
            self.app.notice(str(exc), "error")
            return
        await self.app.session.switch_to(loaded)
        await self.show_restored(loaded)
        self.ask_pending_again(loaded)
        await self.bring_back_draft(resumed=True)

    async def show_restored(self, loaded: LoadedSession, *, at_start: bool = False) -> None:
        """The stored conversation, through the same events as a live one (replayed off the
        UI thread; the transcript builds only its tail). Needs only the session's history:
        at the start it is shown before the sandbox and the agent are ready, before what
        the transcript shows already (a prompt typed meanwhile)."""
        from co_tui.protocol import events as ev
        from co_tui.turn.replay import replay

        session = self.app.session
        sid = session.session_id
        compactions = session.window.compactions

        def replayed() -> list[ev.TurnEvent]:
            return list(replay(session.history, sid, compactions, loaded.notes))

        events = await asyncio.to_thread(replayed)
        if notice := loaded.unfinished_notice():
            events.append(ev.Status(session_id=sid, message=notice, level="warning"))
        self.app.chat.post_message(TranscriptRestored(events, LOADED_ITEMS, keep_shown=at_start))
        chat = self.app.chat
        chat.status = replace(
            chat.status, note=f"resumed: {loaded.info.title or loaded.info.id[:8]}"
        )
        self.app.refresh_status()

    def ask_pending_again(self, loaded: LoadedSession) -> None:
        """A call that was waiting for approval is asked about again (the agent is ready)."""
        if loaded.pending is not None:
            self.turns.resume_pending(loaded.pending)

    # -- the prompt's draft --
    def keep_drafts(self, session: ChatSession) -> None:
        """The prompt's draft, kept in the data folder under the session open at the time."""
        from co_tui.store.drafts import DraftStore
        from co_tui.tui.shell.draft_keeper import DraftKeeper

        def warn(message: str) -> None:
            self.app.notify(message, severity="warning", timeout=6)

        store = DraftStore(user_data_dir())
        self.app.chat.drafts = DraftKeeper(
            store, lambda: session.session_id, session.workspace, warn
        )

    async def bring_back_draft(self, *, resumed: bool) -> None:
        """The draft kept for the session resumed; in a new session, the newest draft left
        in this folder by a session that was never stored (nothing of it was sent). Only
        then is the draft written: what was typed meanwhile must not replace it unread."""
        keeper = self.app.chat.drafts
        if keeper is None:
            return
        await self._find_draft(keeper, resumed=resumed)
        keeper.ready = True
        self.app.chat.save_draft()  # what is in the prompt now: brought back, typed since

    async def _find_draft(self, keeper: DraftKeeper, *, resumed: bool) -> None:
        from co_tui.store.drafts import DraftError

        session = self.app.session

        def find() -> StoredDraft | None:
            if resumed:
                return keeper.store.load(session.session_id)
            return keeper.store.unclaimed(session.workspace, self._is_stored)

        try:
            found = await asyncio.to_thread(find)
        except DraftError as exc:
            self.app.notice(str(exc), "warning")
            return
        if found is None or found.ours or found.writer_alive or found.draft.empty:
            return  # none, in the prompt already, or another co-tui window has it open
        if found.session_id != session.session_id:
            keeper.took_over(found.session_id)
        self.app.chat.restore_draft(found.draft)

    def _is_stored(self, session_id: str) -> bool:
        from co_tui.store.errors import SessionError, SessionNotFound

        try:
            self.app.session.store.info(session_id)
        except SessionNotFound:
            return False
        except SessionError:  # cannot tell: the draft is left where it is
            return True
        return True
