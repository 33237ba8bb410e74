"""While the app is open and no daemon runs the jobs, the app starts one beside it: `co-tui
daemon --while-pid <the app's pid>`, the same daemon as a user's, in a process of its own
(a job's session, model and sandbox never share the app's), which stops when the app ends:
told so on a normal exit, and by the end of the app's process otherwise (a pidfd; or the
daemon's next wake-up, within a minute, where there is none). Nothing starts when no job
will run again, when a daemon already runs (a service, a terminal, another open app), or
when this installation has no console script to start.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from co_tui.store.jobs_runner_lock import log_path, running_daemon

STOP_WAIT_S = 5.0


def console_script() -> Path | None:
    """This installation's `co-tui` script: the one beside the running interpreter."""
    bin_dir = Path(os.path.abspath(sys.executable)).parent
    found = shutil.which("co-tui", path=str(bin_dir))
    return Path(os.path.abspath(found)) if found else None


def has_jobs(store_path: Path) -> bool:
    """Whether some job will run again (not paused, not a one-time job that has run);
    False without a jobs database (none is created)."""
    if not store_path.exists():
        return False
    from co_tui.store.jobs_store import JobStore

    store = JobStore(store_path)
    try:
        return any(not job.paused and store.next_due(job) is not None for job in store.jobs())
    finally:
        store.close()


def start_companion(store_path: Path, app_pid: int) -> subprocess.Popen[bytes] | None:
    """The companion daemon, started; None when none is needed or it cannot start."""
    script = console_script()
    if script is None or running_daemon(store_path) is not None or not has_jobs(store_path):
        return None
    from co_tui.safety.private_files import open_private

    try:
        with open_private(log_path(store_path)) as log:
            return subprocess.Popen(
                [str(script), "daemon", "--while-pid", str(app_pid)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # the terminal's Ctrl+C is the app's, not the daemon's
            )
    except OSError:
        return None


def stop_companion(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the daemon finishes the run under way only as far as a signal lets it: an
    unfinished run is marked interrupted by the next daemon), then SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
