"""The jobs beside the app. While the app is open and no daemon runs the jobs, it starts one
(session/jobs/companion.py) once the session has loaded and the start has settled, and
stops it when the app ends. And it counts what waits in the jobs' inbox for the status bar:
once loaded, after every command (an /inbox decision changes it), and each INBOX_EVERY_S
while a jobs database exists (a daemon files proposals meanwhile). Both read the jobs
database in a thread: it imports the schedule and signing libraries, which start-up never
needs. Without a jobs database nothing is read and no timer runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

    from co_tui.tui.screens.chat import ChatScreen

START_AFTER_S = 3.0  # after the session loaded: the first frames and turn have the cores
INBOX_EVERY_S = 60.0


def _launch(app_pid: int) -> subprocess.Popen[bytes] | None:
    from co_tui.session.jobs.companion import start_companion
    from co_tui.store.jobs_store import jobs_path

    return start_companion(jobs_path(), app_pid)


def _waiting() -> int | None:
    """How many proposals wait; None without a jobs database (none is made)."""
    from co_tui.store.jobs_store import JobStore, jobs_path

    if not jobs_path().exists():
        return None
    store = JobStore()
    try:
        return len(store.proposals())
    finally:
        store.close()


class JobsCompanion:
    def __init__(self, app: App[Any], chat: ChatScreen, loaded: asyncio.Event) -> None:
        """`loaded`: set once the app's start is over (the session loaded, or not)."""
        self.app = app
        self.chat = chat
        self.loaded = loaded
        self.process: subprocess.Popen[bytes] | None = None
        self._inbox_timer: Timer | None = None

    def start_when_loaded(self) -> None:
        self.app.run_worker(self._start(), group="jobs-companion", exclusive=True)

    async def _start(self) -> None:
        await self.loaded.wait()
        await self._count()
        await asyncio.sleep(START_AFTER_S)
        self.process = await asyncio.to_thread(_launch, os.getpid())

    def count_inbox(self) -> None:
        """Count again now (in a worker): after a command."""
        self.app.run_worker(self._count(), group="jobs-inbox", exclusive=True)

    async def _count(self) -> None:
        waiting = await asyncio.to_thread(_waiting)
        if waiting is None:
            return
        if self._inbox_timer is None:
            self._inbox_timer = self.app.set_interval(INBOX_EVERY_S, self.count_inbox)
        status = self.chat.status
        if status.inbox != waiting:
            self.chat.status = replace(status, inbox=waiting)

    def stop(self) -> None:
        if self._inbox_timer is not None:
            self._inbox_timer.stop()
        if self.process is not None:
            from co_tui.session.jobs.companion import stop_companion

            stop_companion(self.process)
            self.process = None
