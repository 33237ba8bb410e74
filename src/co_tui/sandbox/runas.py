"""Who sandboxed commands run as: never root.

Not root: the invoking user. Root: the workspace's owner, when that is not root and may
write the workspace. Anything else is refused with the fix; never run with more rights.
"""

from __future__ import annotations

import os
import pwd
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from co_tui.sandbox.base import SandboxUnavailable

NOGROUP = 65534  # for an owner whose group would be root's
_UNSANDBOXED = "or set sandbox_backend to subprocess (every command then asks)"


@dataclass(frozen=True)
class RunAs:
    uid: int
    gid: int

    def __str__(self) -> str:
        return f"{self.uid}:{self.gid}"


def _primary_gid(uid: int, fallback: int) -> int:
    try:
        gid = pwd.getpwuid(uid).pw_gid
    except KeyError:  # an owner with no account here (e.g. files from another machine)
        gid = fallback
    return gid if gid != 0 else NOGROUP


def pick_run_as(workspace: Path) -> RunAs:
    """The uid:gid sandboxed commands in `workspace` run as; raises SandboxUnavailable
    (one line naming the fix) when no such user can be chosen."""
    quoted = shlex.quote(str(workspace))
    try:
        st = workspace.stat()
    except OSError as exc:
        raise SandboxUnavailable(
            f"cannot inspect the workspace {workspace}: {exc.strerror or exc}"
        ) from exc
    if os.geteuid() != 0:
        uid = os.getuid()
        if not os.access(workspace, os.W_OK | os.X_OK):
            raise SandboxUnavailable(
                f"the workspace {workspace} is not writable by you (uid {uid}), whom sandboxed "
                f"commands run as: run co-tui in a directory you can write, {_UNSANDBOXED}"
            )
        return RunAs(uid, os.getgid())
    if st.st_uid == 0:
        raise SandboxUnavailable(
            f"the workspace {workspace} is owned by root and co-tui never runs sandboxed "
            f"commands as root: run co-tui as a regular user, or `chown -R <user> {quoted}`, "
            f"{_UNSANDBOXED}"
        )
    need = stat.S_IWUSR | stat.S_IXUSR
    if st.st_mode & need != need:
        raise SandboxUnavailable(
            f"the workspace {workspace} is not writable by its owner (uid {st.st_uid}), whom "
            f"sandboxed commands run as: `chmod u+wx {quoted}`, {_UNSANDBOXED}"
        )
    return RunAs(st.st_uid, _primary_gid(st.st_uid, st.st_gid))
