"""Whether a process that claimed something still runs: its pid, and its start time so that
a pid the system gave to another process since is not taken for it."""

from __future__ import annotations

import os
from pathlib import Path


def process_start_time(pid: int) -> str | None:
    """The start time of `pid` in clock ticks since boot (Linux), None if it is not running,
    "" when it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        return ""
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def still_running(pid: int, started: str) -> bool:
    """Whether process `pid` runs and is the one that started at `started` ("": not known)."""
    if Path("/proc").is_dir():
        now = process_start_time(pid)
        if now is None:
            return False
        return not now or not started or now == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
