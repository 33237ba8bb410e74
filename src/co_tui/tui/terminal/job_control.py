"""Ctrl+Z: whether stopping co-tui would hand the terminal to a shell that can bring it back.

A shell with job control starts each job in a process group of its own, in the shell's
session, and `fg` continues it. A co-tui whose process group has no parent outside it in the
session (started by `tmux new-session co-tui`, `ssh host co-tui`, a service: an "orphaned"
group) has no one to continue it: stopped, it would hang with the terminal dark. Then
Ctrl+Z says why and does nothing. Without a terminal (`co-tui serve`'s web driver) Textual
cannot suspend at all.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

NO_SHELL = "no shell with job control started co-tui (fg could not bring it back)"


def why_no_suspend() -> str | None:
    """Why stopping this process now would not come back to the user; None when it would."""
    if sys.platform == "win32":
        return "suspending is not supported on Windows"
    stdin = sys.__stdin__
    if stdin is None or not stdin.isatty():
        return "co-tui is not reading a terminal"
    return None if _a_shell_waits(os.getpid()) else NO_SHELL


def _a_shell_waits(pid: int) -> bool:
    """Whether a process of our session outside our process group is the parent of one in it
    (the group is not orphaned): walks up the parents that share our group."""
    try:
        group, session = os.getpgid(pid), os.getsid(pid)
        for _ in range(64):  # a chain of parents in one group is short; a loop is not ours
            parent = _parent_of(pid)
            if parent is None or parent <= 1:
                return False
            if os.getsid(parent) != session:
                return False
            if os.getpgid(parent) != group:
                return True
            pid = parent
    except OSError:  # a parent went away meanwhile: nothing waits for us there
        return False
    return False


def _parent_of(pid: int) -> int | None:
    if pid == os.getpid():
        return os.getppid()
    try:  # Linux; elsewhere only co-tui's own parent is known (fail closed past it)
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses
    return int(stat.rsplit(")", 1)[1].split()[1])
