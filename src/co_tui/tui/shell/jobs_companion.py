"""The app's companion daemon: while the app is open and no daemon runs the jobs, it starts
one (session/jobs/companion.py) once the session has loaded and the start has settled, and
stops it when the app ends. The check runs in a thread: reading the jobs database imports
the schedule and signing libraries, which start-up never needs."""

from __future__ import annotations

import asyncio
import os
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from co_tui.tui.shell.app_base import AppBase

START_AFTER_S = 3.0  # after the session loaded: the first frames and turn have the cores


def _launch(app_pid: int) -> subprocess.Popen[bytes] | None:
    from co_tui.session.jobs.companion import start_companion
    from co_tui.store.jobs_store import jobs_path

    return start_companion(jobs_path(), app_pid)


class JobsCompanion:
    def __init__(self, app: AppBase) -> None:
        self.app = app
        self.process: subprocess.Popen[bytes] | None = None

    def start_when_loaded(self) -> None:
        self.app.run_worker(self._start(), group="jobs-companion", exclusive=True)

    async def _start(self) -> None:
        await self.app.loaded.wait()
        await asyncio.sleep(START_AFTER_S)
        self.process = await asyncio.to_thread(_launch, os.getpid())

    def stop(self) -> None:
        if self.process is not None:
            from co_tui.session.jobs.companion import stop_companion

            stop_companion(self.process)
            self.process = None
