"""`co-tui daemon`: runs jobs when they fall due, one per data folder.

It holds `daemon.lock` in the data folder (a second daemon refuses to start and names the
first), marks the runs a killed process left behind as interrupted (never re-run), then
loops: run what is due, one job at a time, each claimed first so that nothing runs twice;
sleep until the next fire time. Sleeps are cut at MAX_SLEEP_S and the wall clock read again,
so a suspended laptop or a clock that jumped is noticed within a minute; `co-tui jobs add`
and the like wake it at once (SIGUSR1). Idle, it wakes once a minute at most. When a run
ends the desktop is told (co_tui.daemon.notify) from a thread, so no signal waits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from co_tui.daemon.notify import announce
from co_tui.safety.processes import still_running
from co_tui.safety.visible import visible
from co_tui.session.jobs.decide import expire_waiting
from co_tui.session.jobs.run import run_job
from co_tui.store.jobs_runner_lock import lock_path, take_lock
from co_tui.store.jobs_store import JobStore, jobs_path

MAX_SLEEP_S = 60.0


def say(message: str) -> None:
    stamp = datetime.now(UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    print(f"{stamp} co-tui daemon: {visible(message, keep='')}", file=sys.stderr, flush=True)


async def serve(
    store_path: Path | None = None,
    *,
    report: Callable[[str], None] = say,
    while_pid: int | None = None,
) -> None:
    """Run due jobs until SIGTERM or SIGINT, or (`while_pid`) until that process ends: the
    app's companion daemon (session/jobs/companion.py). Raises DaemonRunning."""
    path = store_path or jobs_path()
    fd = take_lock(lock_path(path))  # before anything is opened: a second daemon stops here
    store = JobStore(path)
    loop = asyncio.get_running_loop()
    wake, stop = asyncio.Event(), asyncio.Event()
    loop.add_signal_handler(signal.SIGUSR1, wake.set)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    watched = _watch_process(loop, while_pid, stop) if while_pid is not None else None
    try:
        interrupted = store.mark_interrupted()
        if interrupted:
            report(f"{interrupted} run(s) had been cut short; they will not run again")
        report(f"running the jobs of {store.path} (pid {os.getpid()})")
        while not stop.is_set():
            if while_pid is not None and watched is None and not still_running(while_pid, ""):
                break
            for gone in await expire_waiting(store):
                report(f"{gone.seal.short_id} {gone.tool_name} expired without a decision")
            ready, soonest = store.due()
            for due in ready:
                if stop.is_set() or not store.claim(due):
                    continue
                report(f"job {due.job.id} ({due.slot}) starts")
                outcome = await run_job(store, due.job, due.slot)
                report(f"job {due.job.id} ({due.slot}) {outcome.state}: {outcome.detail}")
                shown = await asyncio.to_thread(announce, due.job, outcome)
                if shown is not None:
                    report(f"notified: {shown}")
            if ready:
                continue
            delay = MAX_SLEEP_S
            if soonest is not None:
                delay = min(MAX_SLEEP_S, max(0.0, (soonest - datetime.now(UTC)).total_seconds()))
            wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_either(wake, stop), delay)
    finally:
        if watched is not None:
            loop.remove_reader(watched)
            os.close(watched)
        for sig in (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        store.close()
        os.close(fd)
        report("stopped")


def _watch_process(loop: asyncio.AbstractEventLoop, pid: int, stop: asyncio.Event) -> int | None:
    """Set `stop` when process `pid` ends, woken by a pidfd (no polling); where there is none
    (not Linux), `pid` is checked each time the loop wakes (at least once a minute)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        stop.set()  # gone already
        return None
    except (AttributeError, OSError):
        return None
    loop.add_reader(pidfd, stop.set)
    return pidfd


async def _either(first: asyncio.Event, second: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(first.wait()), asyncio.ensure_future(second.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()
