"""Namespace isolation with bubblewrap: no network, read-only system, only the workspace
writable (nothing at all for read-only runs), no capabilities, never root (see runas.py),
a cleared environment, dies with co-tui.

Limits: bubblewrap has no cgroups, so the command's shell sets hard rlimits first
(`ulimit -p` processes, `ulimit -v` address space) which the command cannot raise. A memory
hog therefore fails its allocation (and is reported) rather than being OOM-killed.
When co-tui runs as root, bwrap itself is started as the workspace owner (`setpriv`), so
the sandbox never holds root's file access through the user-namespace mapping.

bwrap and setpriv are found once, when the sandbox is made, in PATH's absolute directories
only (never the current directory), and run by that path with an empty environment.

Network: none, whatever sandbox_network says. One command the user approved "with network"
in the dialog shares this machine's network namespace (`--share-net`: localhost services
included), and sees the resolver's file where /etc/resolv.conf points outside /etc.

Read-only runs: the workspace's .git/config (and config.worktree) is covered with /dev/null
when it is a regular file in a plain .git directory, so git reads no repository
configuration; otherwise git is not given the repository (base.READ_ONLY_GIT_GUARD).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from co_tui.config.memory_size import docker_memory_bytes
from co_tui.sandbox.base import (
    READ_ONLY_ENV,
    READ_ONLY_GIT_GUARD,
    WORKSPACE_CHECK,
    CommandResult,
    IsolationLevel,
    NetworkAccess,
    OutputListener,
    SandboxError,
    SandboxUnavailable,
    git_config_masks,
)
from co_tui.sandbox.runas import RunAs, pick_run_as
from co_tui.sandbox.subprocess import run_in_process_group

HOME_DIR = "/home/co"
_MEMORY_ERRORS = re.compile(
    r"MemoryError|Cannot allocate memory|out of memory|std::bad_alloc|memory exhausted",
    re.IGNORECASE,
)
# Sets the hard limits, then runs the command ($1) in a shell of its own.
_LIMITS = 'ulimit -p {pids} && ulimit -v {kb} && exec /bin/sh -c "$1"'
_NOT_INSTALLED = "bwrap not installed (Debian/Ubuntu: apt install bubblewrap)"
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


def find_program(name: str) -> str | None:
    """The absolute path of the executable `name` in PATH's absolute directories; "", "."
    and other relative entries (the current directory) are skipped. An absolute `name` is
    taken as it is; another name with a slash is not looked up."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    if "/" in name:
        return None
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    absolute = os.pathsep.join(entry for entry in entries if os.path.isabs(entry))
    return shutil.which(name, path=absolute) if absolute else None


def resolver_binds() -> list[str]:
    """For a command with network: the folder of the file /etc/resolv.conf links to when it
    lies outside /etc (systemd-resolved's /run/systemd/resolve), read-only."""
    conf = Path("/etc/resolv.conf")
    if not conf.is_symlink():
        return []
    target = conf.resolve().parent
    if target == Path("/etc") or Path("/etc") in target.parents:
        return []
    return ["--ro-bind-try", str(target), str(target)]


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
    network = NetworkAccess("none", granted="this machine's network, localhost services included")

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
        found = find_program(bwrap)
        if found is None:
            raise SandboxUnavailable(_NOT_INSTALLED)
        self.bwrap = found
        self.run_as = run_as or pick_run_as(self.workspace)
        self._drop_root = self._drop_root_prefix()
        # The arguments before and after the mounts that cover .git files (read-only runs).
        self._mounts = {ro: self._mount_args(read_only=ro) for ro in (False, True)}
        self._rest = {ro: self._rest_args(read_only=ro) for ro in (False, True)}
        self._with_network = ["--share-net", *resolver_binds()]

    def _drop_root_prefix(self) -> list[str]:
        if os.geteuid() != 0:
            return []
        setpriv = find_program("setpriv")
        if setpriv is None:
            raise SandboxUnavailable(
                "setpriv not found: co-tui runs as root and needs it to start bwrap as the "
                "workspace owner (Debian/Ubuntu: apt install util-linux)"
            )
        uid, gid = self.run_as.uid, self.run_as.gid
        return [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]

    def _mount_args(self, *, read_only: bool) -> list[str]:
        workspace = ["--ro-bind" if read_only else "--bind", str(self.workspace), "/workspace"]
        return [*self._drop_root, self.bwrap, *system_binds(), *workspace]

    def _rest_args(self, *, read_only: bool) -> list[str]:
        user = ["--uid", str(self.run_as.uid), "--gid", str(self.run_as.gid)]
        env = dict(_ENV, **READ_ONLY_ENV) if read_only else _ENV
        setenv = [arg for key, value in env.items() for arg in ("--setenv", key, value)]
        limits = _LIMITS.format(
            pids=self.pids_limit, kb=docker_memory_bytes(self.mem_limit) // 1024
        )
        script = READ_ONLY_GIT_GUARD + limits if read_only else limits
        return [*_ISOLATION, *user, *setenv, "--", "/bin/sh", "-c", script, "co-sandbox"]

    def _git_masks(self) -> list[str]:
        """/dev/null over the workspace's .git configuration files, looked at now. A device
        bind: bwrap's read-only binds are nodev, and /dev/null discards what is written."""
        masks = git_config_masks(self.workspace)
        return [arg for mask in masks for arg in ("--dev-bind", "/dev/null", mask.in_sandbox)]

    def argv(self, cmd: str, *, read_only: bool = False, network: bool = False) -> list[str]:
        masks = self._git_masks() if read_only else []
        rest = self._rest[read_only]
        if network:  # after --unshare-all, which it undoes for the network alone
            split = len(_ISOLATION)
            rest = [*rest[:split], *self._with_network, *rest[split:]]
        return [*self._mounts[read_only], *masks, *rest, cmd]

    async def run_command(
        self,
        cmd: str,
        timeout: float = 120,
        *,
        read_only: bool = False,
        network: bool = False,
        on_output: OutputListener | None = None,
    ) -> CommandResult:
        if read_only and network:
            raise SandboxError("a read-only run never has network")
        # The pid namespace ends with the command's shell: nothing it started outlives it.
        result = await run_in_process_group(
            self.argv(cmd, read_only=read_only, network=network),
            cwd=None,
            env={},  # argv[0] is an absolute path; bwrap sets the command's environment
            timeout=timeout,
            output_limit=self.output_limit,
            on_output=on_output,
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
    _sandbox, why = probed_sandbox(workspace, bwrap=bwrap, timeout=timeout, run_as=run_as)
    return why


def probed_sandbox(
    workspace: Path,
    *,
    timeout: float = 3.0,
    bwrap: str = "bwrap",
    run_as: RunAs | None = None,
    mem_limit: str = "1g",
    output_limit: int = 100_000,
) -> tuple[BwrapSandbox | None, str | None]:
    """(the sandbox, None) when `probe` finds it works, else (None, why not): the sandbox
    probed is the one used, bwrap and setpriv found once."""
    try:
        sandbox = BwrapSandbox(
            workspace, bwrap=bwrap, run_as=run_as, mem_limit=mem_limit, output_limit=output_limit
        )
    except SandboxUnavailable as exc:
        return None, str(exc)
    why = _check(sandbox, timeout)
    return (sandbox, None) if why is None else (None, why)


def _check(sandbox: BwrapSandbox, timeout: float) -> str | None:
    try:
        proc = subprocess.run(
            sandbox.argv(WORKSPACE_CHECK[False]),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
            env={},
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
