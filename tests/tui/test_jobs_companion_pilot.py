"""The open app runs the jobs when no daemon does: a companion daemon starts once the app
has loaded, and stops with the app."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from co_tui.store.job_schedule import parse_schedule
from co_tui.store.jobs_runner_lock import running_daemon
from co_tui.store.jobs_store import JobStore, jobs_path
from tests.tui.helpers import make_app, shell_then_text, wait_until


@pytest.mark.e2e
async def test_the_open_app_runs_a_daemon_for_the_jobs_and_stops_it(tmp_path: Path) -> None:
    store = JobStore(jobs_path())
    store.add("list the files", parse_schedule("in 1 hour", datetime.now(UTC)), tmp_path)
    store.close()
    app = make_app(shell_then_text([]), tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(
            pilot,
            lambda: (
                app.jobs_companion.process is not None
                and running_daemon(jobs_path()) == app.jobs_companion.process.pid
            ),
            "the companion daemon",
            timeout=30,
        )
        process = app.jobs_companion.process
    assert process is not None and process.poll() is not None
    assert running_daemon(jobs_path()) is None
