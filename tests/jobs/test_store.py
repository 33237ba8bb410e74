"""The jobs store on a real SQLite file: a slot runs at most once whoever claims it, missed
runs are made up once, a killed run is never re-run, a proposal is filed once."""

from __future__ import annotations

import multiprocessing
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from co_tui.store.job_schedule import parse_schedule
from co_tui.store.jobs_store import Due, JobStore
from tests.jobs.helpers import a_proposal

BERLIN = ZoneInfo("Europe/Berlin")
T0 = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)  # a Monday, 08:00 in Berlin


def store_at(tmp_path: Path) -> JobStore:
    return JobStore(tmp_path / "data" / "jobs.db")


def add(store: JobStore, text: str, created: datetime, workspace: Path) -> Due | None:
    schedule = parse_schedule(text, created, "Europe/Berlin")
    job = store.add("Summarise my day", schedule, workspace, created=created)
    return store.next_due(job, created)


def test_the_database_is_private(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.close()
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.path.parent).st_mode) == 0o700


def test_a_slot_is_claimed_once_by_any_number_of_stores(tmp_path: Path) -> None:
    first, second = store_at(tmp_path), store_at(tmp_path)
    add(first, "every day at 9:00", T0, tmp_path)
    (due,), _ = first.due(T0 + timedelta(hours=1))
    assert first.claim(due) is True
    assert second.claim(due) is False
    assert first.due(T0 + timedelta(hours=1))[0] == []  # claimed: not due again
    (run,) = second.runs()
    assert (run.slot, run.state) == ("2026-11-30T09:00", "running")


def _claim_in_a_process(path: str, job_id: str, slot: str, fire: str, out: Any) -> None:
    store = JobStore(Path(path))
    job = store.job(job_id)
    assert job is not None
    out.put(store.claim(Due(job, slot, datetime.fromisoformat(fire))))


def test_processes_racing_for_a_slot_leave_one_winner(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    add(store, "every day at 9:00", T0, tmp_path)
    (due,), _ = store.due(T0 + timedelta(hours=1))
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    args = (str(store.path), due.job.id, due.slot, due.fire.isoformat(), results)
    procs = [context.Process(target=_claim_in_a_process, args=args) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert sorted(results.get(timeout=5) for _ in procs) == [False, False, False, True]


def test_missed_runs_are_made_up_once_with_the_latest(tmp_path: Path) -> None:
    """A laptop asleep from Monday to Thursday morning: one run, for Thursday's 09:00."""
    store = store_at(tmp_path)
    add(store, "every day at 9:00", T0, tmp_path)
    woke = datetime(2026, 12, 3, 9, 30, tzinfo=BERLIN)
    (due,), soonest = store.due(woke)
    assert due.slot == "2026-12-03T09:00"
    assert soonest is None
    assert store.claim(due)
    ready, soonest = store.due(woke)
    assert ready == [] and soonest == datetime(2026, 12, 4, 9, 0, tzinfo=BERLIN)


def test_the_repeated_hour_in_autumn_runs_once(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    saturday = datetime(2026, 10, 24, 12, 0, tzinfo=BERLIN)
    add(store, "every day at 2:30", saturday, tmp_path)
    first_pass = datetime(2026, 10, 25, 0, 31, tzinfo=UTC)  # 02:31 CEST
    (due,), _ = store.due(first_pass)
    assert store.claim(due)
    store.finish(due.job.id, due.slot, "done")
    second_pass = datetime(2026, 10, 25, 1, 31, tzinfo=UTC)  # 02:31 again, now CET
    ready, soonest = store.due(second_pass)
    assert ready == []
    assert soonest is not None and soonest.astimezone(BERLIN).day == 26


def test_a_run_whose_process_died_is_interrupted_and_never_due_again(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    add(store, "every day at 9:00", T0, tmp_path)
    (due,), _ = store.due(T0 + timedelta(hours=1))
    dead = multiprocessing.get_context("spawn").Process(target=int)
    dead.start()
    dead.join()
    assert store.claim(due, pid=dead.pid)
    assert store.mark_interrupted() == 1
    (run,) = store.runs()
    assert run.state == "interrupted" and "ended before" in run.detail
    assert store.due(T0 + timedelta(hours=1))[0] == []
    # A run of a process that still runs is left alone.
    add(store, "every day at 9:00", T0, tmp_path)
    (other,), _ = store.due(T0 + timedelta(hours=1))
    assert store.claim(other)
    assert store.mark_interrupted() == 0


def test_a_one_time_job_runs_once(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    add(store, "in 20 minutes", T0, tmp_path)
    ready, soonest = store.due(T0)
    assert ready == [] and soonest == T0 + timedelta(minutes=20)
    (due,), _ = store.due(T0 + timedelta(hours=5))
    assert store.claim(due)
    assert store.due(T0 + timedelta(days=5)) == ([], None)


def test_a_one_time_job_stored_after_its_moment_still_runs(tmp_path: Path) -> None:
    """ "in 1 second" on a busy machine: the job is stored after the moment it names (CI
    found a daemon waiting for it forever)."""
    store = store_at(tmp_path)
    schedule = parse_schedule("in 1 second", T0, "Europe/Berlin")
    store.add("say hi", schedule, tmp_path, created=T0 + timedelta(seconds=3))
    (due,), _ = store.due(T0 + timedelta(seconds=4))
    assert due.fire == T0 + timedelta(seconds=1)
    assert store.claim(due)
    assert store.due(T0 + timedelta(days=1)) == ([], None)


def test_a_paused_job_is_never_due(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    due = add(store, "every 15 minutes", T0, tmp_path)
    assert due is not None
    store.set_paused(due.job.id, True)
    assert store.due(T0 + timedelta(hours=1)) == ([], None)
    store.set_paused(due.job.id, False)
    assert len(store.due(T0 + timedelta(hours=1))[0]) == 1


def test_a_proposal_is_filed_once_per_run_and_call(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    proposal = a_proposal()
    assert store.propose(proposal) is True
    assert store.propose(proposal) is False  # the same run's same call: a catch-up, a retry
    second_call = a_proposal(position=2)  # the same tool-call id
    assert store.propose(second_call) is True  # a provider reusing ids merges nothing
    assert [p.position for p in store.proposals()] == [1, 2]


def test_a_job_that_skips_missed_runs_makes_none_up(tmp_path: Path) -> None:
    """Asleep from Monday to Thursday 09:30: with `skip`, nothing runs on waking; the next
    run is Friday's. A fire time a runner sees within the grace still runs."""
    store = store_at(tmp_path)
    schedule = parse_schedule("every day at 9:00", T0, "Europe/Berlin")
    job = store.add("Summarise my day", schedule, tmp_path, created=T0, catch_up="skip")
    woke = datetime(2026, 12, 3, 9, 30, tzinfo=BERLIN)
    ready, soonest = store.due(woke)
    assert ready == [] and soonest == datetime(2026, 12, 4, 9, 0, tzinfo=BERLIN)
    (due,), _ = store.due(datetime(2026, 12, 3, 9, 1, tzinfo=BERLIN))  # seen on time
    assert due.slot == "2026-12-03T09:00"
    assert store.job(job.id) == job  # the policy is stored


def test_a_database_from_before_kinds_and_policies_is_read(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "data" / "jobs.db"
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE jobs (id TEXT PRIMARY KEY, prompt TEXT NOT NULL, schedule TEXT NOT NULL,"
            " workspace TEXT NOT NULL, created TEXT NOT NULL, paused INTEGER NOT NULL DEFAULT 0)"
        )
    old = JobStore(path)
    schedule = parse_schedule("every day at 9:00", T0, "Europe/Berlin")
    job = old.add("Summarise my day", schedule, tmp_path, created=T0)
    assert (job.kind, job.catch_up) == ("prompt", "latest")
    assert old.jobs() == [job]
