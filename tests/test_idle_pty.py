"""The real `co-tui` on a pseudo-terminal, left alone: once the cursor has stopped blinking
nothing in it wakes up (no polling input thread, no span exporter timer, no sidebar timer),
and a terminal that goes away without a SIGHUP still ends it."""

from __future__ import annotations

import contextlib
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tests.servers.fake_openai import serve, text
from tests.test_peers_pty import co_tui
from tests.test_signals import CLI, env_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc and a Linux pty")

QUIET_WINDOW_S = 2.0


def wakeups_by_thread(pid: int) -> dict[int, int]:
    """How many times each thread of `pid` has been scheduled onto a CPU (schedstat)."""
    counts = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            counts[int(task.name)] = int((task / "schedstat").read_text().split()[2])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that just ended
    return counts


@pytest.mark.e2e
def test_an_idle_app_does_not_wake_up(tmp_path: Path, isolated_env: Path) -> None:
    server_running = serve(default=text("Hello there."))
    with server_running as server, co_tui(tmp_path, env_for(server.url)) as term:
        term.type(b"hi\r")
        term.shows(b"Hello there.", "the answer")
        woke: dict[int, int] = {}

        def a_quiet_window() -> bool:
            before = wakeups_by_thread(term.proc.pid)
            time.sleep(QUIET_WINDOW_S)
            after = wakeups_by_thread(term.proc.pid)
            term.drain()
            woke.clear()
            woke.update({tid: n - before.get(tid, 0) for tid, n in after.items()})
            return not any(woke.values())

        try:
            # The cursor blinks for 10 s after the last key, the idle collection runs 1 s
            # after the turn: within 30 s a 2 s window must pass with no thread woken.
            wait_for(a_quiet_window, "a 2 s window in which no thread woke", term.proc, 30)
        except AssertionError as failure:
            woken = f"wake-ups by thread id in the last window: {woke}"
            raise AssertionError(f"{failure}; {woken}") from None


@pytest.mark.e2e
def test_a_terminal_that_goes_away_without_a_hangup_ends_the_app(
    tmp_path: Path, isolated_env: Path
) -> None:
    # The pty is not the app's controlling terminal, so closing it sends no SIGHUP: the
    # input ending must be enough (an app left like this used to spin on forever).
    master, slave = pty.openpty()
    with serve(default=text("Hello there.")) as server:
        proc = subprocess.Popen(
            CLI,
            cwd=tmp_path,
            env={**env_for(server.url), "TERM": "xterm-256color"},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        try:
            screen = bytearray()

            def loaded() -> bool:
                with contextlib.suppress(BlockingIOError):
                    screen.extend(os.read(master, 65536))
                return b"subprocess" in screen

            os.set_blocking(master, False)
            wait_for(loaded, "the app to load", proc)
            os.close(master)
            wait_for(lambda: proc.poll() is not None, "the app to end after its terminal went")
            assert proc.returncode == 129  # as on a hangup: 128 + SIGHUP
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
