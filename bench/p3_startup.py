"""P3: start-up. Time from process start to the first frame of `co-tui` (CoApp exits right
after its first frame when CO_TUI_EXIT_AFTER_FIRST_FRAME is set), against a minimal Textual
app started the same way, both in a real pseudo-terminal. Goal: ratio <= 1.5.
"""

from __future__ import annotations

import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 5

MINIMAL_APP = r"""
import sys, time
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("hello")

    def on_mount(self):
        self.call_after_refresh(self.done)

    def done(self):
        with open(sys.argv[1], "w") as fh:
            fh.write(f"first-frame {time.time():.6f}\n")
        self.exit()

Minimal().run()
"""


def _time_to_first_frame(argv: list[str], env: dict[str, str], cwd: str) -> float:
    marker = Path(cwd) / "first-frame.txt"
    marker.unlink(missing_ok=True)
    env = {**env, "CO_TUI_EXIT_AFTER_FIRST_FRAME": str(marker)}
    if "minimal.py" in argv[-1]:
        argv = [*argv, str(marker)]
    master, slave = pty.openpty()
    started = time.time()
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True
    )
    os.close(slave)
    deadline = started + 30
    while proc.poll() is None and time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                os.read(master, 65536)  # drain the terminal so the app never blocks on it
            except OSError:
                break
    proc.wait(timeout=10)
    os.close(master)
    text = marker.read_text() if marker.exists() else ""
    if not text.startswith("first-frame "):
        raise RuntimeError(f"{argv} wrote no first-frame time (exit code {proc.returncode})")
    return float(text.split()[1]) - started


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
