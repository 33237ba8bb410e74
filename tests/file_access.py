"""Run a command that file permissions stop, and give files to another user.

The tests run as root, and root reads and writes every file whatever its mode. The command
is started without the capabilities that override file permissions (CAP_CHOWN,
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER): it is held to the mode bits like any
user, so a file given to `OTHER_UID` is someone else's, readable or writable as its mode
says. (Running it as that user instead would need a Python it can execute; the venv's lives
under /root.)
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

OTHER_UID = 65534  # nobody

_LAUNCHER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for cap in (0, 1, 2, 3):  # CHOWN, DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER
    if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP: gone after exec
        sys.exit(f"cannot drop capability {cap}: errno {ctypes.get_errno()}")
os.execv(sys.argv[1], sys.argv[1:])
"""


@functools.cache
def _can_restrict() -> bool:
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, "/bin/sh", "-c", "grep CapEff /proc/self/status"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return probe.returncode == 0 and int(probe.stdout.split()[-1], 16) & 0b1111 == 0


def restricted(cmd: list[str]) -> list[str]:
    """`cmd` (an absolute program path first) run without permission-overriding
    capabilities. Skips the test where that cannot be done (not root, not Linux)."""
    if not _can_restrict():
        pytest.skip("needs root on Linux, to give files to another user")
    return [sys.executable, "-c", _LAUNCHER, *cmd]


def give_away(path: Path, mode: int) -> None:
    """`path` owned by OTHER_UID, with `mode`."""
    os.chown(path, OTHER_UID, OTHER_UID)
    os.chmod(path, mode)
