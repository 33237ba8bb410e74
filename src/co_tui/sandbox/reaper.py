"""Run one shell command; when it ends, or on SIGTERM, kill everything it started. Linux.

    python -I -S reaper.py PARENT_PID CMD

The reaper is a child subreaper (PR_SET_CHILD_SUBREAPER), so descendants that detach
(setsid, nohup, a double fork) are re-parented to it instead of to init: once the command's
shell exits, whatever is left is found under /proc and SIGKILLed, until the reaper has no
child at all. It then exits with the shell's status (a death by signal is passed on).
SIGTERM (co-tui's timeout or cancel, or co-tui's own death through PR_SET_PDEATHSIG) kills
the command and everything else at once. PDEATHSIG follows the thread that started the
reaper: co-tui starts it from its event loop, which lives as long as co-tui.

A script of its own, importing nothing of co-tui, run without site: it starts quickly.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
SHELL = "/bin/sh"
# Python ignores these; the command must get the default behaviour back (`yes | head`).
RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM)


def prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option})")


def descendants(root: int) -> list[int]:
    """Live (non-zombie) descendants of `root`, from /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[-1].split()
        except OSError:  # exited meanwhile
            continue
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def reap_available() -> bool:
    """Reap every child that has exited; False once the reaper has no child left."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] != 0:
            pass
    except ChildProcessError:
        return False
    return True


def kill_everything() -> None:
    """SIGKILL every descendant until none is left. Orphans come back to the subreaper, so
    having no child means having no descendant."""
    me = os.getpid()
    while reap_available():
        for pid in descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # already gone
                continue
        time.sleep(0.002)


def die_by(sig: int) -> None:
    if sig not in (signal.SIGKILL, signal.SIGSTOP):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file of the reaper
        signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # a signal whose default action is to be ignored


def exit_like(status: int) -> None:
    """Exit as the command did: same code, or killed by the same signal."""
    if os.WIFSIGNALED(status):
        die_by(os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


def on_sigterm(signum: int, frame: object) -> None:
    kill_everything()
    die_by(signal.SIGTERM)


def main(parent: int, cmd: str) -> None:
    signal.signal(signal.SIGTERM, on_sigterm)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # co-tui died before PDEATHSIG was armed
        os._exit(128 + signal.SIGTERM)
    shell = os.posix_spawn(SHELL, [SHELL, "-c", cmd], os.environ, setsigdef=RESET_SIGNALS)
    while True:  # reap detached descendants as they die, until the shell itself exits
        pid, status = os.waitpid(-1, 0)
        if pid == shell:
            break
    kill_everything()
    exit_like(status)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
