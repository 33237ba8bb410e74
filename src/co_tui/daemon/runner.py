"""`co-tui daemon`: runs jobs when they fall due, one per data folder.

It holds `daemon.lock` in the data folder (a second daemon refuses to start and names the
first), marks the runs a killed process left behind as interrupted (never re-run), then
loops: run what is due, one job at a time, each claimed first so that nothing runs twice;
sleep until the next fire time. Sleeps are cut at MAX_SLEEP_S and the wall clock read again,
so a suspended laptop or a clock that jumped is noticed within a minute; `co-tui jobs add`
and the like wake it at once (SIGUSR1). Idle, it wakes once a minute at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from co_tui.safety.visible import visible
from co_tui.session.jobs.run import run_job
from co_tui.session.jobs.store import JobStore, jobs_path

LOCK_NAME = "daemon.lock"
MAX_SLEEP_S = 60.0


class DaemonRunning(Exception):
    """Another daemon holds this data folder."""


def lock_path(store_path: Path) -> Path:
    return store_path.with_name(LOCK_NAME)


def take_lock(path: Path) -> int:
    """Hold `path` for this process (the file descriptor, kept open while it runs); raises
    DaemonRunning naming the holder."""
    from co_tui.safety.private_files import private_dir

    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        raise DaemonRunning(
            f"a daemon (pid {holder or '?'}) already runs the jobs of {path.parent}"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


def running_daemon(store_path: Path) -> int | None:
    """The pid of the daemon holding `store_path`'s folder, or None when none does."""
    path = lock_path(store_path)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        text = os.read(fd, 32).decode(errors="replace").strip()
        return int(text) if text.isdigit() else None
    finally:
        os.close(fd)  # a shared lock taken here goes with it
    return None


def wake_daemon(store_path: Path) -> bool:
    """Tell a running daemon that the jobs changed; False when none runs."""
    pid = running_daemon(store_path)
    if pid is None:
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGUSR1)
        return True
    return False


def say(message: str) -> None:
    stamp = datetime.now(UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    print(f"{stamp} co-tui daemon: {visible(message, keep='')}", file=sys.stderr, flush=True)


async def serve(store_path: Path | None = None, *, report: Callable[[str], None] = say) -> None:
    """Run due jobs until SIGTERM or SIGINT. Raises DaemonRunning."""
    path = store_path or jobs_path()
    fd = take_lock(lock_path(path))  # before anything is opened: a second daemon stops here
    store = JobStore(path)
    loop = asyncio.get_running_loop()
    wake, stop = asyncio.Event(), asyncio.Event()
    loop.add_signal_handler(signal.SIGUSR1, wake.set)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        interrupted = store.mark_interrupted()
        if interrupted:
            report(f"{interrupted} run(s) had been cut short; they will not run again")
        report(f"running the jobs of {store.path} (pid {os.getpid()})")
        while not stop.is_set():
            ready, soonest = store.due()
            for due in ready:
                if stop.is_set() or not store.claim(due):
                    continue
                report(f"job {due.job.id} ({due.slot}) starts")
                outcome = await run_job(store, due.job, due.slot)
                report(f"job {due.job.id} ({due.slot}) {outcome.state}: {outcome.detail}")
            if ready:
                continue
            delay = MAX_SLEEP_S
            if soonest is not None:
                delay = min(MAX_SLEEP_S, max(0.0, (soonest - datetime.now(UTC)).total_seconds()))
            wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_either(wake, stop), delay)
    finally:
        for sig in (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        store.close()
        os.close(fd)
        report("stopped")


async def _either(first: asyncio.Event, second: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(first.wait()), asyncio.ensure_future(second.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()
