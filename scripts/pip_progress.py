"""Run a verbose `pip install` and show its progress in one line instead of pages of log.

    python scripts/pip_progress.py --log .venv/pip-install.log -- .venv/bin/pip install -v ...

An install can take a while (a package built from source, such as the optional
llama-cpp-python engine, compiles for many minutes); `pip -q` shows nothing meanwhile and looks
hung. This shows what pip is doing, a build's steps done of total (cmake prints "[ 45%]",
ninja "[123/456]"), and the elapsed time: one line updated in
place on a terminal, a line every --every seconds otherwise (CI logs). Everything pip prints
goes to the log file; when the command fails, its last lines and the log's path are printed.
The exit status is the command's. Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import TextIO

LLAMA_NOTE = "compiling llama.cpp (llama-cpp-python): about 16 minutes on 2 cores the first time"
TAIL_LINES = 40
TTY_REFRESH_S = 0.2

_NINJA = re.compile(r"^\s*\[(\d+)/(\d+)\]")
_CMAKE = re.compile(r"^\s*\[\s*(\d+)%\]")
_PHASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Obtaining file://"), "reading the project"),
    (re.compile(r"^Collecting (\S+)"), "collecting {0}"),
    (re.compile(r"^\s*Downloading (\S+)"), "downloading {0}"),
    (re.compile(r"^\s*Using cached (\S+)"), "using cached {0}"),
    (re.compile(r"Building wheel for llama[-_]cpp[-_]python"), LLAMA_NOTE),
    (re.compile(r"Building (?:editable|wheel) for (\S+)"), "building {0}"),
    (re.compile(r"^\s*-- Configuring"), "configuring the llama.cpp build (cmake)"),
    (re.compile(r"^Installing collected packages"), "installing the packages"),
    (re.compile(r"^Successfully installed"), "installed"),
)


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """What the output said so far: the phase, and the build's steps done of total."""

    def __init__(self) -> None:
        self.phase = "starting pip"
        self.steps: tuple[int, int] | None = None  # done, total
        self.percent: int | None = None

    def feed(self, line: str) -> bool:
        """Take one line of output; True when what is shown changed."""
        if match := _NINJA.match(line):
            step = (int(match[1]), int(match[2]))
            changed, self.steps = step != self.steps, step
            return changed
        if match := _CMAKE.match(line):
            percent = int(match[1])
            changed, self.percent = percent != self.percent, percent
            return changed
        for pattern, template in _PHASES:
            if match := pattern.search(line):
                phase = template.format(*match.groups())
                if phase == self.phase:
                    return False
                if self.phase == LLAMA_NOTE and template.startswith("building"):
                    return False  # pip names the wheel again while the build runs
                self.phase, self.steps, self.percent = phase, None, None
                return True
        return False

    def line(self, elapsed: float) -> str:
        """The time, the steps, then what pip does: a narrow terminal cuts the words."""
        parts = [_elapsed(elapsed)]
        if self.steps is not None:
            done, total = self.steps
            parts.append(f"step {done} of {total} ({100 * done // max(total, 1)}%)")
        elif self.percent is not None:
            parts.append(f"{self.percent}%")
        parts.append(self.phase)
        return " · ".join(parts)


class Reporter:
    """One line rewritten in place on a terminal; a line every `every` seconds otherwise
    (and when the phase changes)."""

    def __init__(self, out: TextIO, every: float) -> None:
        self.out = out
        self.tty = out.isatty()
        self.every = every
        self._last_at = float("-inf")
        self._last_phase = ""

    def show(self, progress: Progress, elapsed: float, *, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            if not force and now - self._last_at < TTY_REFRESH_S:
                return
            width = shutil.get_terminal_size((80, 24)).columns - 1
            self.out.write("\r" + progress.line(elapsed)[:width].ljust(width))
        else:
            new_phase = progress.phase != self._last_phase
            if not (force or new_phase or now - self._last_at >= self.every):
                return
            self._last_phase = progress.phase
            self.out.write(progress.line(elapsed) + "\n")
        self.out.flush()
        self._last_at = now

    def finish(self) -> None:
        if self.tty:
            self.out.write("\n")
            self.out.flush()


def run(command: list[str], log_path: Path, out: TextIO, every: float) -> int:
    started = time.monotonic()
    progress, reporter = Progress(), Reporter(out, every)
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w", encoding="utf-8") as log:
        try:
            proc = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                bufsize=1,
            )
        except OSError as exc:
            out.write(f"cannot run {command[0]}: {exc.strerror or exc}\n")
            return 127
        assert proc.stdout is not None
        reporter.show(progress, 0.0, force=True)
        for line in proc.stdout:
            log.write(line)
            tail.append(line.rstrip("\n"))
            changed = progress.feed(line)
            reporter.show(progress, time.monotonic() - started, force=changed and reporter.tty)
        code = proc.wait()
    elapsed = time.monotonic() - started
    if code == 0:
        progress.phase, progress.steps, progress.percent = "done", None, None
        reporter.show(progress, elapsed, force=True)
        reporter.finish()
        return 0
    reporter.finish()
    out.write(f"pip failed (exit code {code}) after {_elapsed(elapsed)}; its last lines:\n")
    out.writelines(f"  {line}\n" for line in tail)
    out.write(f"the full log: {log_path}\n")
    out.flush()
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, default=Path("pip-install.log"), help="the full log")
    parser.add_argument(
        "--every", type=float, default=30.0, help="seconds between lines when not on a terminal"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the pip command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    return run(command, args.log, sys.stdout, args.every)


if __name__ == "__main__":
    sys.exit(main())
