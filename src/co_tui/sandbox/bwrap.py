"""Namespace isolation with bubblewrap: no network, read-only system, only the workspace
writable (nothing at all for read-only runs), no capabilities, never root (see runas.py),
a cleared environment, dies with co-tui.

Limits: bubblewrap has no cgroups, so the command's shell sets hard rlimits first
(`ulimit -p` processes, `ulimit -v` address space) which the command cannot raise. A memory
hog therefore fails its allocation (and is reported) rather than being OOM-killed.
When co-tui runs as root, bwrap itself is started as the workspace owner (`setpriv`), so
the sandbox never holds root's file access through the user-namespace mapping.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from co_tui.sandbox.base import (
    READ_ONLY_ENV,
    WORKSPACE_CHECK,
    CommandResult,
    IsolationLevel,
    SandboxUnavailable,
)
from co_tui.sandbox.docker import docker_memory_bytes
from co_tui.sandbox.runas import RunAs, pick_run_as
from co_tui.sandbox.subprocess import run_in_process_group

HOME_DIR = "/home/co"
_MEMORY_ERRORS = re.compile(
    r"MemoryError|Cannot allocate memory|out of memory|std::bad_alloc|memory exhausted",
    re.IGNORECASE,
)
# Sets the hard limits, then runs the command ($1) in a shell of its own.
_LIMITS = 'ulimit -p {pids} && ulimit -v {kb} && exec /bin/sh -c "$1"'
# Everything but the workspace and the user; --clearenv precedes the --setenv options.
_ISOLATION = (
    f"--proc /proc --dev /dev --tmpfs /tmp --tmpfs {HOME_DIR} --chdir /workspace "
    "--unshare-all --die-with-parent --new-session --cap-drop ALL --remount-ro / --clearenv"
).split()
_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": HOME_DIR,
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
}


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
        run_as: RunAs | None = None,
    ) -> None:
        self.workspace = workspace.resolve()
        self.mem_limit = mem_limit
        self.pids_limit = pids_limit
        self.output_limit = output_limit
        self.bwrap = bwrap
        self.run_as = run_as or pick_run_as(self.workspace)
        self._drop_root = self._drop_root_prefix()
        self._prefix = {ro: self._build_prefix(read_only=ro) for ro in (False, True)}

    def _drop_root_prefix(self) -> list[str]:
        if os.geteuid() != 0:
            return []
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise SandboxUnavailable(
                "setpriv not found: co-tui runs as root and needs it to start bwrap as the "
                "workspace owner (Debian/Ubuntu: apt install util-linux)"
            )
        uid, gid = self.run_as.uid, self.run_as.gid
        return [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]

    def _build_prefix(self, *, read_only: bool) -> list[str]:
        workspace = ["--ro-bind" if read_only else "--bind", str(self.workspace), "/workspace"]
        user = ["--uid", str(self.run_as.uid), "--gid", str(self.run_as.gid)]
        env = dict(_ENV, **READ_ONLY_ENV) if read_only else _ENV
        setenv = [arg for key, value in env.items() for arg in ("--setenv", key, value)]
        bwrap = [self.bwrap, *system_binds(), *workspace, *_ISOLATION, *user, *setenv, "--"]
        return [*self._drop_root, *bwrap]

    def argv(self, cmd: str, *, read_only: bool = False) -> list[str]:
        limits = _LIMITS.format(
            pids=self.pids_limit, kb=docker_memory_bytes(self.mem_limit) // 1024
        )
        return [*self._prefix[read_only], "/bin/sh", "-c", limits, "co-sandbox", cmd]

    async def run_command(
        self, cmd: str, timeout: float = 120, *, read_only: bool = False
    ) -> CommandResult:
        # The pid namespace ends with the command's shell: nothing it started outlives it.
        result = await run_in_process_group(
            self.argv(cmd, read_only=read_only),
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

    async def switch_session(self, session_id: str) -> None:
        return None  # nothing is named after the session


def probe(
    workspace: Path, bwrap: str = "bwrap", timeout: float = 3.0, *, run_as: RunAs | None = None
) -> str | None:
    """None when bubblewrap runs a command here as the run-as user and that user can write
    and enter the workspace inside the sandbox, else why not (one line, with the fix)."""
    path = shutil.which(bwrap)
    if path is None:
        return "bwrap not installed (Debian/Ubuntu: apt install bubblewrap)"
    try:
        sandbox = BwrapSandbox(workspace, bwrap=path, run_as=run_as)
    except SandboxUnavailable as exc:
        return str(exc)
    try:
        proc = subprocess.run(
            sandbox.argv(WORKSPACE_CHECK[False]),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap probe failed: {exc}"
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode == 1 and not err:
        return (
            f"uid {sandbox.run_as.uid} cannot write or enter the workspace {sandbox.workspace} "
            "inside the sandbox: check its permissions and ACLs"
        )
    if proc.returncode != 0:
        return f"bwrap cannot create a sandbox here: {err[-1] if err else proc.returncode}"
    return None
