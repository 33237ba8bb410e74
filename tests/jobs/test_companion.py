"""The app's companion daemon: started only when there are jobs and no daemon runs them,
stopped by the app, and gone by itself when the app's process ends (even by kill -9)."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from co_tui.session.jobs.companion import start_companion, stop_companion
from co_tui.store.job_schedule import parse_schedule
from co_tui.store.jobs_runner_lock import running_daemon
from co_tui.store.jobs_store import JobStore, jobs_path
from tests.helpers import wait_for

pytestmark = pytest.mark.e2e


def add_job(workspace: Path) -> None:
    store = JobStore(jobs_path())
    store.add("list the files", parse_schedule("in 1 hour", datetime.now(UTC)), workspace)
    store.close()


def test_no_job_no_companion_and_no_database_made() -> None:
    assert start_companion(jobs_path(), os.getpid()) is None
    assert not jobs_path().exists()


def test_a_companion_runs_the_jobs_until_the_app_stops_it(tmp_path: Path) -> None:
    add_job(tmp_path)
    process = start_companion(jobs_path(), os.getpid())
    assert process is not None
    try:
        wait_for(lambda: running_daemon(jobs_path()) == process.pid, "the companion", process)
        assert start_companion(jobs_path(), os.getpid()) is None  # one runs already
    finally:
        stop_companion(process)
    assert process.returncode == 0
    assert running_daemon(jobs_path()) is None
    log = jobs_path().with_name("daemon.log").read_text()
    assert f"pid {process.pid}" in log and "stopped" in log


def test_a_companion_stops_when_its_app_is_killed(tmp_path: Path) -> None:
    add_job(tmp_path)
    app = subprocess.Popen(["sleep", "60"])
    process = start_companion(jobs_path(), app.pid)
    assert process is not None
    try:
        wait_for(lambda: running_daemon(jobs_path()) == process.pid, "the companion", process)
        app.kill()
        app.wait()
        process.wait(timeout=30)  # woken by the app's pidfd, not by its next minute
    finally:
        stop_companion(process)
        app.kill()
    assert process.returncode == 0
    assert running_daemon(jobs_path()) is None


def test_a_one_time_job_that_has_run_starts_no_companion(tmp_path: Path) -> None:
    """A reminder raised yesterday stays in the jobs list: it is no reason for a daemon."""
    store = JobStore(jobs_path())
    now = datetime.now(UTC)
    job = store.add("stretch", parse_schedule("in 1 minute", now), tmp_path, kind="reminder")
    due = store.next_due(job)
    assert due is not None and store.claim(due)
    store.finish(job.id, due.slot, "done", "reminded")
    paused = store.add("list the files", parse_schedule("every day at 9:00", now), tmp_path)
    store.set_paused(paused.id, True)
    store.close()
    assert start_companion(jobs_path(), os.getpid()) is None
