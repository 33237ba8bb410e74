"""Who runs the jobs of a data folder: the daemon holds `daemon.lock` there (an flock, with
its pid written in), so a second daemon refuses and names the first, and `co-tui jobs add`,
`/jobs` and `co-tui daemon install` can tell whether one runs and wake it (SIGUSR1)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
from pathlib import Path

LOCK_NAME = "daemon.lock"
LOG_NAME = "daemon.log"  # what a daemon started without a terminal writes (a service, the app's)


class DaemonRunning(Exception):
    """Another daemon holds this data folder."""


def lock_path(store_path: Path) -> Path:
    return store_path.with_name(LOCK_NAME)


def log_path(store_path: Path) -> Path:
    return store_path.with_name(LOG_NAME)


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
