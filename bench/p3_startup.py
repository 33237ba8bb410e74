"""P3: start-up. Time from process start until the terminal has received the first frame of
`co-tui`, against a minimal Textual app started the same way, both in a real pseudo-terminal.
Both draw FIRST_FRAME_TEXT (co-tui in its prompt), and the first frame counts as received when
the terminal's output holds it: one detection for both apps. Goal: ratio <= 1.5.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 5
FIRST_FRAME_TEXT = b"Ask anything"  # the placeholder of co-tui's prompt
TIMEOUT_S = 30.0
EXIT_WAIT_S = 10.0

MINIMAL_APP = r"""
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("Ask anything")

Minimal().run()
"""


def _time_to_first_frame(argv: list[str], env: dict[str, str], cwd: str) -> float:
    """Seconds from starting `argv` on a pseudo-terminal until its output holds
    FIRST_FRAME_TEXT; the program is then ended (SIGTERM) and waited for."""
    master, slave = pty.openpty()
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True
    )
    os.close(slave)
    try:
        return _wait_for_first_frame(master, proc) - started
    finally:
        _end(proc, master)
        os.close(master)


def _wait_for_first_frame(master: int, proc: subprocess.Popen[bytes]) -> float:
    """The time the terminal's output first held FIRST_FRAME_TEXT (read as it comes)."""
    received = b""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if not select.select([master], [], [], 0.05)[0]:
            if proc.poll() is not None:
                break
            continue
        try:
            received += os.read(master, 65536)
        except OSError:  # the program closed the terminal
            break
        if FIRST_FRAME_TEXT in received:
            return time.monotonic()
    raise RuntimeError(f"{proc.args!r} drew no first frame (exit code {proc.poll()})")


def _end(proc: subprocess.Popen[bytes], master: int) -> None:
    """End the program and wait, reading what it still draws (a full terminal would block
    its exit): a program still exiting would slow the next run."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + EXIT_WAIT_S
    while proc.poll() is None and time.monotonic() < deadline:
        if select.select([master], [], [], 0.05)[0]:
            try:
                os.read(master, 65536)
            except OSError:
                break
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def main() -> None:
    python = sys.executable
    co_tui = str(Path(python).with_name("co-tui"))
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "TERM": "xterm-256color",
            "XDG_CONFIG_HOME": f"{tmp}/config",
            "XDG_DATA_HOME": f"{tmp}/data",
            "CO_TUI_MODEL": "test",
            "COLUMNS": "120",
            "LINES": "40",
        }
        script = Path(tmp) / "minimal.py"
        script.write_text(MINIMAL_APP)
        co_argv = [co_tui] if Path(co_tui).exists() else [python, "-m", "co_tui.cli"]
        minimal, app = [], []
        for _ in range(RUNS):  # interleaved, so machine load hits both alike
            minimal.append(_time_to_first_frame([python, str(script)], env, tmp))
            app.append(_time_to_first_frame(co_argv, env, tmp))
    m, a = statistics.median(minimal), statistics.median(app)
    print(f"P3 start-up to first frame (median of {RUNS}, real pty)")
    print(f"  minimal Textual app  {m * 1000:.0f} ms")
    print(f"  co-tui               {a * 1000:.0f} ms")
    print(f"  ratio                {a / m:.2f}   (goal <= 1.5)")


if __name__ == "__main__":
    main()
