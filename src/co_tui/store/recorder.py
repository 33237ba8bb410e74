"""SessionRecorder: one conversation's saves as it runs (every checkpoint of a turn), and the
fork it continues in when another writer changed the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage

from co_tui.context.compaction import ContextWindow
from co_tui.store.errors import SessionConflict, SessionError, SessionNotFound
from co_tui.store.records import LoadedSession, Note, ToolRun, new_session_id, title_from_prompt
from co_tui.store.session_store import SessionStore


@dataclass(frozen=True)
class Fork:
    """A save found another writer's turns in the session: this one continues in a fork."""

    source_id: str
    fork_id: str
    reason: str

    def message(self) -> str:
        return (
            f"{self.reason}; to lose neither, this conversation continues as session "
            f"{self.fork_id[:8]}, a fork of {self.source_id[:8]} (co-tui sessions lists both)"
        )


class SessionRecorder:
    """One session being recorded: run_turn's `on_checkpoint` and tool journal, the turn
    count, and the fork when another writer saved the same session."""

    def __init__(
        self,
        store: SessionStore,
        session_id: str | None = None,
        *,
        model: str = "",
        cwd: Path | str | None = None,
        turns: int = 0,
        title: str = "",
        window: ContextWindow | None = None,
        headless: bool = False,
    ) -> None:
        self.store = store
        self.headless = headless  # a `co-tui -p` session
        self.session_id = session_id or new_session_id()
        self.model = model
        self.cwd = str(Path(cwd or Path.cwd()).resolve())
        self.turns = turns
        self.title = title
        self.window = window if window is not None else ContextWindow()
        self.forks: list[Fork] = []  # forks made by saves, for the front to report

    @classmethod
    def resume(
        cls,
        store: SessionStore,
        loaded: LoadedSession,
        model: str = "",
        window: ContextWindow | None = None,
        headless: bool = False,
    ) -> SessionRecorder:
        info = loaded.info
        return cls(
            store,
            info.id,
            model=model or info.model,
            cwd=info.cwd,
            turns=info.turns,
            title=info.title,
            window=window,
            headless=headless,
        )

    def begin_turn(self, prompt: str) -> None:
        self.turns += 1
        if not self.title:
            self.title = title_from_prompt(prompt)

    def save(
        self, messages: Sequence[ModelMessage], pending: DeferredToolRequests | None = None
    ) -> int:
        """Store the session; another writer's newer save makes it a fork (`forks`)."""
        fields: dict[str, Any] = dict(
            pending=pending,
            title=self.title,
            model=self.model,
            cwd=self.cwd,
            turns=self.turns,
            compactions=self.window.compactions,
            headless=self.headless,
        )
        try:
            return self.store.save(self.session_id, messages, **fields)
        except SessionConflict as conflict:
            source = self.session_id
            self.session_id = self.store.fork(source, messages, **fields)
            self.forks.append(Fork(source, self.session_id, str(conflict)))
            return len(messages)

    async def checkpoint(
        self, messages: list[ModelMessage], pending: DeferredToolRequests | None
    ) -> None:
        """run_turn's `on_checkpoint`: the write runs in a thread, off the event loop."""
        await asyncio.to_thread(self.save, messages, pending)

    # -- run_turn's tool journal: a call is named by its response's position and its id --
    async def calls_decided(self, response_at: int, records: Sequence[Any]) -> None:
        """`records`: the ApprovalRecords of one batch, the calls of the response at
        `response_at` in the session's messages, before any of them runs."""
        runs = [
            ToolRun(
                r.tool_call_id,
                r.tool_name,
                dict(r.args),
                r.decision,
                "denied" if r.decision == "deny" else "running",
                response_at=response_at,
            )
            for r in records
        ]
        await asyncio.to_thread(self.store.calls_started, self.session_id, runs)

    async def call_finished(self, response_at: int, tool_call_id: str, result: str) -> None:
        await asyncio.to_thread(
            self.store.call_finished, self.session_id, response_at, tool_call_id, result
        )

    async def call_interrupted(self, response_at: int, tool_call_id: str) -> None:
        await asyncio.to_thread(
            self.store.call_interrupted, self.session_id, response_at, tool_call_id
        )

    async def note_error(self, position: int, message: str) -> None:
        """An aborted turn's error, shown again where it was when the session is resumed."""
        note = Note(position, message)
        with contextlib.suppress(SessionError):  # shown live; only a resumed one would lack it
            await asyncio.to_thread(self.store.add_note, self.session_id, note)

    def start_new(self, session_id: str | None = None) -> None:
        """After /clear: later turns go to a fresh session; the old one stays resumable."""
        self.session_id = session_id or new_session_id()
        self.turns = 0
        self.title = ""


def open_session(
    store: SessionStore,
    cwd: Path | str,
    *,
    continue_latest: bool = False,
    resume: str | None = None,
) -> LoadedSession | None:
    """What `--continue` / `--resume ID` name: a loaded session, or None for a new one.
    Raises SessionError (one line) when there is nothing to continue or it cannot be read."""
    if resume:
        return store.load(store.resolve(resume).id)
    if continue_latest:
        where = str(Path(cwd).resolve())
        info = store.latest(where)
        if info is None:
            raise SessionNotFound(f"no earlier session in {where} to continue")
        return store.load(info.id)
    return None
