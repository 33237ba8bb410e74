"""A program in a real terminal: tmux on its own socket, read with capture-pane, with the
program's CPU time and memory from /proc. Used by p8 to time co-tui as a user sees it."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
POLL_S = 0.005
EXIT_WAIT_S = 15.0


class Terminal:
    def __init__(self, socket: str, size: tuple[int, int] = (120, 40)) -> None:
        self.socket = socket
        self.size = size
        self.pid = 0
        self.started = 0.0

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )
        return done.stdout

    def start(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        """Start `argv` as the terminal's only program (exec'd, so its pid is the pane's)."""
        self.close()
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"exec env -i {assignments} {shlex.join(argv)}"
        width, height = self.size
        self.started = time.monotonic()
        self._tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-c", str(cwd),
                   command)  # fmt: skip
        self.pid = int(self._tmux("display-message", "-p", "#{pane_pid}").strip() or 0)
        if not self.pid:
            raise RuntimeError(f"tmux did not start {argv[0]}")

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p")

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-l", text)

    def press(self, *keys: str) -> None:
        self._tmux("send-keys", *keys)

    def wait_for(self, shown: Callable[[str], bool], what: str, timeout: float = 60) -> float:
        """Poll the screen until `shown(screen)`; the time it first held. Fails naming `what`."""
        deadline = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            screen = self.screen()
            if shown(screen):
                return now
            if now > deadline:
                raise RuntimeError(f"gave up after {timeout:g}s waiting for {what}:\n{screen}")
            if not Path(f"/proc/{self.pid}").exists():
                raise RuntimeError(f"the program ended before {what}")
            time.sleep(POLL_S)

    def cpu(self) -> float:
        """CPU seconds of the program and of its children it has waited for."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / TICKS

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def close(self) -> None:
        """End the terminal and wait until its program has exited (SIGHUP; SIGKILL after
        EXIT_WAIT_S): a program still saving and exiting would take CPU from the next one."""
        pid, self.pid = self.pid, 0
        self._tmux("kill-server")
        if not pid:
            return
        deadline = time.monotonic() + EXIT_WAIT_S
        while _state(pid) != "Z":
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                raise RuntimeError(
                    f"the program (pid {pid}) did not exit {EXIT_WAIT_S:g}s after SIGHUP"
                )
            time.sleep(POLL_S)


def _state(pid: int) -> str:
    """The process state letter from /proc; "Z" once it has exited (reaped or not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "Z"
