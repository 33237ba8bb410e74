"""The daemon across a daylight-saving change, its wall clock set by faketime (the clock of
this process and of the model server stay real): a time the spring change skips runs once,
at the first minute after it; a time the autumn change repeats runs once."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from co_tui.store.job_schedule import parse_schedule
from co_tui.store.jobs_store import Job
from tests.helpers import engine_unavailable, wait_for
from tests.jobs.test_daemon import CLI, jobs, model_env
from tests.servers.fake_openai import serve, text

pytestmark = pytest.mark.e2e

# Berlin, 29 March 2026: at 01:00 UTC the clocks go from 02:00 CET to 03:00 CEST.
SPRING_CHANGE = datetime(2026, 3, 29, 1, 0, tzinfo=UTC)


def faked_daemon(start: str, cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """`co-tui daemon` whose wall clock starts at `start` (UTC) and runs on: libfaketime
    preloaded into it (not the faketime wrapper, which would take the signals)."""
    found = sorted(Path("/usr/lib").glob("*/faketime/libfaketime.so.1"))
    if not found:
        engine_unavailable("libfaketime is not installed (apt-get install faketime)")
    faked = {**env, "TZ": "UTC", "LD_PRELOAD": str(found[0]), "FAKETIME": start}
    return subprocess.Popen(
        [CLI, "daemon"], cwd=cwd, env=faked, stdout=subprocess.DEVNULL, stderr=log.open("wb")
    )


def daily_at_2_30(tmp_path: Path, created: datetime) -> Job:
    """A job every day at 2:30 in Berlin, added at `created`, in tmp_path/ws."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = jobs()
    try:
        schedule = parse_schedule("every day at 2:30", created, "Europe/Berlin")
        return store.add("Say hello", schedule, workspace, created=created)
    finally:
        store.close()


@contextmanager
def daemon_from(
    start: str, tmp_path: Path, url: str
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """The faked daemon and its log; stopped with SIGTERM, which it must obey."""
    log = tmp_path / "daemon.log"
    proc = faked_daemon(start, tmp_path, model_env(url), log)
    try:
        yield proc, log
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()


def test_a_time_the_spring_change_skips_runs_once_just_after_it(tmp_path: Path) -> None:
    job = daily_at_2_30(tmp_path, datetime(2026, 3, 28, 12, 0, tzinfo=UTC))
    with serve([text("Good morning.")], default=text("a second run")) as srv:
        with daemon_from("@2026-03-29 00:59:56", tmp_path, srv.url) as (proc, log):
            wait_for(lambda: jobs().runs(), "the run after the change", proc, timeout=60)
            wait_for(lambda: jobs().runs()[0].state != "running", "the run to end", proc)
        asked = len(srv.requests)
    (run,) = jobs().runs(job.id)
    assert run.state == "done", run.detail
    assert run.fire == SPRING_CHANGE  # 02:30 does not exist that night: 03:00 CEST
    assert asked == 1
    assert "running the jobs" in log.read_text()


def test_a_time_the_autumn_change_repeats_runs_once(tmp_path: Path) -> None:
    """25 October 2026: 02:30 comes twice in Berlin (00:30 and 01:30 UTC). The clock runs
    240 times fast from 00:29:50 UTC: 20 s here are the 80 minutes past both."""
    job = daily_at_2_30(tmp_path, datetime(2026, 10, 24, 12, 0, tzinfo=UTC))
    with serve([text("Good night.")], default=text("a second run")) as srv:
        with daemon_from("@2026-10-25 00:29:50 x240", tmp_path, srv.url) as (proc, log):
            started = time.monotonic()
            wait_for(lambda: jobs().runs(), "the first 02:30", proc, timeout=60)
            time.sleep(max(0.0, 22 - (time.monotonic() - started)))  # past 01:30 UTC
            assert proc.poll() is None, log.read_text()
        asked = len(srv.requests)
    (run,) = jobs().runs(job.id)
    assert run.fire == datetime(2026, 10, 25, 0, 30, tzinfo=UTC), log.read_text()
    assert asked == 1
