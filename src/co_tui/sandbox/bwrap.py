"""Namespace isolation with bubblewrap: no network, read-only system, only the workspace
writable, no capabilities, uid 1000, a cleared environment, dies with co-tui.

Limits: bubblewrap has no cgroups, so the command's shell sets hard rlimits first
(`ulimit -p` processes, `ulimit -v` address space) which the command cannot raise. A memory
hog therefore fails its allocation (and is reported) rather than being OOM-killed.
When co-tui runs as root, bwrap itself is started as uid 1000 (`setpriv`), so the
sandbox never holds root's file access through the user-namespace mapping.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from co_tui.sandbox.base import CommandResult, IsolationLevel
from co_tui.sandbox.docker import docker_memory_bytes
from co_tui.sandbox.subprocess import run_in_process_group

SANDBOX_UID = 1000
HOME_DIR = "/home/co"
_MEMORY_ERRORS = re.compile(
    r"MemoryError|Cannot allocate memory|out of memory|std::bad_alloc|memory exhausted",
    re.IGNORECASE,
)
# Sets the hard limits, then runs the command ($1) in a shell of its own.
_LIMITS = 'ulimit -p {pids} && ulimit -v {kb} && exec /bin/sh -c "$1"'


def system_binds() -> list[str]:
    """Read-only views of the system directories, symlinks kept (merged /usr or not)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return [*args, "--ro-bind", "/etc", "/etc"]


class BwrapSandbox:
    name = "bwrap"
    isolation_level: IsolationLevel = "namespace"

    def __init__(
        self,
        workspace: Path,
        *,
        mem_limit: str = "1g",
        pids_limit: int = 256,
        output_limit: int = 100_000,
        bwrap: str = "bwrap",
    ) -> None:
        self.workspace = workspace.resolve()
        self.mem_limit = mem_limit
        self.pids_limit = pids_limit
        self.output_limit = output_limit
        self.bwrap = bwrap
        self._prefix = self._build_prefix()

    def _build_prefix(self) -> list[str]:
        drop_root: list[str] = []
        if os.geteuid() == 0 and (setpriv := shutil.which("setpriv")):
            drop_root = [setpriv, f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}",
                         "--clear-groups", "--"]  # fmt: skip
        return [
            *drop_root,
            self.bwrap,
            *system_binds(),
            "--proc", "/proc",
            "--dev", "/dev",
            "--tmpfs", "/tmp",
            "--tmpfs", HOME_DIR,
            "--bind", str(self.workspace), "/workspace",
            "--chdir", "/workspace",
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--uid", str(SANDBOX_UID),
            "--gid", str(SANDBOX_UID),
            "--cap-drop", "ALL",
            "--remount-ro", "/",
            "--clearenv",
            "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
            "--setenv", "HOME", HOME_DIR,
            "--setenv", "LANG", "C.UTF-8",
            "--setenv", "TERM", "dumb",
            "--setenv", "PAGER", "cat",
            "--setenv", "GIT_PAGER", "cat",
            "--",
        ]  # fmt: skip

    def argv(self, cmd: str) -> list[str]:
        limits = _LIMITS.format(
            pids=self.pids_limit, kb=docker_memory_bytes(self.mem_limit) // 1024
        )
        return [*self._prefix, "/bin/sh", "-c", limits, "co-sandbox", cmd]

    async def run_command(self, cmd: str, timeout: float = 120) -> CommandResult:
        result = await run_in_process_group(
            self.argv(cmd),
            cwd=None,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            timeout=timeout,
            output_limit=self.output_limit,
        )
        if (
            result.exit_code != 0
            and not result.timed_out
            and _MEMORY_ERRORS.search(result.output[-4000:])
        ):
            reason = f"out of memory (the sandbox's memory limit is {self.mem_limit})"
            return CommandResult(
                result.output, result.exit_code, result.timed_out, result.truncated, reason
            )
        return result

    async def cleanup(self) -> None:
        return None  # nothing outlives a command: --die-with-parent and a pid namespace


def probe(workspace: Path, bwrap: str = "bwrap", timeout: float = 3.0) -> str | None:
    """None when bubblewrap can run a command in `workspace` here, else why not (one line)."""
    path = shutil.which(bwrap)
    if path is None:
        return "bwrap not installed (Debian/Ubuntu: apt install bubblewrap)"
    sandbox = BwrapSandbox(workspace, bwrap=path)
    try:
        proc = subprocess.run(
            sandbox.argv("true"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap probe failed: {exc}"
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot create a sandbox here: {err[-1] if err else proc.returncode}"
    return None
