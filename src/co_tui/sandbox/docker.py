"""Full isolation: hardened Docker containers per session, commands run with `docker exec`.

The container (`co-runner-<session id[:8]>`) starts on the first command and is reused; it
runs with no capabilities, no new privileges, never as root (see runas.py), a read-only
root filesystem, a tmpfs /tmp, a pids limit, a memory limit, CPU quota and (by default) no
network. Only the workspace (mounted at /workspace) is writable on the host. Read-only runs
go to a second container (`…-ro`, started on the first of them) that mounts the workspace
read-only and has no network whatever sandbox_network says. In it the workspace's
.git/config (and config.worktree), when a regular file in a plain .git directory, is covered
with /dev/null, so git reads no repository configuration. A mount over a file the host then
replaces covers nothing more, so before each read-only run the files are looked at again and
the container is made anew when they changed; each run also checks the cover in the
container and, when it is not there, gives git no repository (base.READ_ONLY_GIT_GUARD).
One command the user approved "with network" in the dialog (when the session container has
none) runs in a container of its own on Docker's bridge network (`…-net-<token>`, hardened
like the others, the workspace writable), removed when the command ends.

The docker SDK is blocking: every call runs in a thread so the event loop never waits.
Cancelling a command kills its process group inside the container. Containers carry
labels naming the owning host, pid and process start time, so a later co-tui can remove
the containers of sessions whose process died.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_tui.safety.processes import process_start_time, still_running
from co_tui.sandbox.base import (
    READ_ONLY_ENV,
    READ_ONLY_GIT_GUARD,
    WORKSPACE_CHECK,
    CommandResult,
    IsolationLevel,
    MaskedFile,
    NetworkAccess,
    OutputCollector,
    OutputListener,
    SandboxError,
    SandboxUnavailable,
    git_config_masks,
)
from co_tui.sandbox.runas import RunAs, pick_run_as

if TYPE_CHECKING:
    import docker

CONTAINER_PREFIX = "co-runner-"
LABEL_OWNER = "co-tui.sandbox"
LABEL_HOST = "co-tui.host"
LABEL_PID = "co-tui.pid"
LABEL_PID_START = "co-tui.pid-start"
LABEL_SESSION = "co-tui.session"
HOME_DIR = "/home/co"
# After the in-container `timeout` fired, how long the output stream may stay open (a
# process that left the command's process group still holds it) before the container
# is restarted to get rid of it.
STREAM_GRACE = 3.0
SIGKILL_EXIT = 128 + 9
STDERR = 2
# `timeout` puts the command in a process group of its own and SIGKILLs that group when
# time is up; once the command ends, whatever it left in the group (background jobs, a fork
# bomb) is killed too. A client-side watchdog covers processes that left the group.
# The command's stderr joins its stdout in the container (keeping their order); the exit
# code comes back alone on stderr, which spares a round trip to `exec inspect`.
# The group's id goes to a file named by the exec's token ($3) for a cancel to kill it; a
# cancel that came first left a marker, checked once the id is written (no race).
_WRAPPER = (
    'f=/tmp/co-exec-$3; [ -e "$f.cancel" ] && exit 130; '
    'timeout -s KILL "$1" /bin/sh -c "$2" 2>&1 & pid=$!; echo "$pid" > "$f"; '
    '[ -e "$f.cancel" ] && kill -KILL "-$pid" "$pid" 2>/dev/null; '
    'wait "$pid" 2>/dev/null; rc=$?; kill -KILL "-$pid" 2>/dev/null; rm -f "$f" "$f.cancel"; '
    'printf %s "$rc" >&2'
)
# Until `timeout` made its own group, killing its pid is enough: it has not forked yet.
_CANCEL = 'f=/tmp/co-exec-$1; : > "$f.cancel"; read -r pid < "$f" && kill -KILL "-$pid" "$pid"'
CANCEL_WAIT = 5.0  # how long a cancelled turn waits for the kill to reach the container
# What one command approved "with network" gets while the session container has none.
GRANTED_NETWORK = "Docker's bridge network, in a fresh container of its own (empty /tmp and home)"
_EXIT_STATUS = re.compile(rb"(.*?)(\d+)", re.DOTALL)
_OOM_KILL = re.compile(rb"^oom_kill (\d+)$", re.MULTILINE)


def owner_alive(labels: dict[str, str]) -> bool:
    """Whether the co-tui process that created a container still runs (on this host)."""
    if labels.get(LABEL_HOST) != socket.gethostname():
        return True  # another machine's container: not ours to judge
    try:
        pid = int(labels.get(LABEL_PID, ""))
    except ValueError:
        return False
    return still_running(pid, labels.get(LABEL_PID_START, ""))


def remove_stale_containers(client: docker.DockerClient) -> list[str]:
    """Remove co-tui sandbox containers whose owning process died. Returns their names."""
    removed: list[str] = []
    for container in client.containers.list(all=True, filters={"label": LABEL_OWNER}):
        labels = container.labels or {}
        if owner_alive(labels):
            continue
        with contextlib.suppress(Exception):  # already gone, or being removed by another
            container.remove(force=True)
            removed.append(container.name)
    return removed


@dataclass
class _ExecOutcome:
    collector: OutputCollector
    exit_code: int | None
    stream_stuck: bool


class ContainerGone(SandboxError):
    """The container was removed behind co-tui's back; the next command recreates it."""


class DockerSandbox:
    name = "docker"
    isolation_level: IsolationLevel = "full"

    def __init__(
        self,
        workspace: Path,
        *,
        session_id: str,
        client: docker.DockerClient,
        image: str = "co-tui-sandbox",
        network: str = "none",
        mem_limit: str = "1g",
        cpus: float = 1.0,
        pids_limit: int = 256,
        output_limit: int = 100_000,
        run_as: RunAs | None = None,
    ) -> None:
        self.workspace = workspace.resolve()
        self._name_after(session_id)
        self.client = client
        self.image = image
        self.network_mode = network
        self.mem_limit = mem_limit
        self.nano_cpus = int(cpus * 1e9)
        self.pids_limit = pids_limit
        self.output_limit = output_limit
        self.run_as = run_as or pick_run_as(self.workspace)
        self.stale_removed: list[str] = []
        self._starts: dict[bool, asyncio.Task[str]] = {}  # read_only -> its container's start
        self._ro_masks: tuple[MaskedFile, ...] = ()  # what the read-only container covers
        self._oom_kills: dict[str, int] = {}

    @property
    def network(self) -> NetworkAccess:
        if self.network_mode == "none":
            return NetworkAccess("none", granted=GRANTED_NETWORK)
        return NetworkAccess("bridge")

    @property
    def container_id(self) -> str | None:
        return self._started(read_only=False)

    @property
    def ro_container_id(self) -> str | None:
        return self._started(read_only=True)

    def _started(self, *, read_only: bool) -> str | None:
        start = self._starts.get(read_only)
        if start is None or not start.done() or start.cancelled() or start.exception():
            return None
        return start.result()

    # -- lifecycle ---------------------------------------------------------------------
    def _name_after(self, session_id: str) -> None:
        self.session_id = session_id
        self.container_name = f"{CONTAINER_PREFIX}{session_id[:8]}"
        self.ro_container_name = f"{self.container_name}-ro"

    async def switch_session(self, session_id: str) -> None:
        """The containers carry the session in their name and label: remove them; the next
        command starts new ones named after `session_id`."""
        if session_id == self.session_id:
            return
        await self.cleanup()
        self._name_after(session_id)

    def _labels(self) -> dict[str, str]:
        pid = os.getpid()
        return {
            LABEL_OWNER: "1",
            LABEL_HOST: socket.gethostname(),
            LABEL_PID: str(pid),
            LABEL_PID_START: process_start_time(pid) or "",
            LABEL_SESSION: self.session_id,
        }

    def _remove_leftover(self, name: str) -> None:
        from docker.errors import NotFound

        try:
            existing = self.client.containers.get(name)
        except NotFound:
            return
        if existing.labels.get(LABEL_PID) != str(os.getpid()) and owner_alive(existing.labels):
            raise SandboxError(
                f"container {name} belongs to a running co-tui "
                f"(pid {existing.labels.get(LABEL_PID)})"
            )
        existing.remove(force=True)

    def _start_container(
        self,
        read_only: bool,
        masks: tuple[MaskedFile, ...] = (),
        *,
        name: str = "",
        network_mode: str = "",
    ) -> str:
        """Start a container (blocking): the session's, its read-only one, or (`name`,
        `network_mode`) one for a single command with network."""
        from docker.errors import APIError, ImageNotFound
        from docker.types import Mount

        self.stale_removed += remove_stale_containers(self.client)
        name = name or (self.ro_container_name if read_only else self.container_name)
        network_mode = network_mode or ("none" if read_only else self.network_mode)
        self._remove_leftover(name)
        tmpfs_opts = "rw,nosuid,nodev,size=256m"
        uid, gid = self.run_as.uid, self.run_as.gid
        environment = {
            "HOME": HOME_DIR,
            "TERM": "dumb",
            "PAGER": "cat",
            "GIT_PAGER": "cat",
            "LANG": "C.UTF-8",
            **(READ_ONLY_ENV if read_only else {}),
        }
        try:
            container = self.client.containers.run(
                self.image,
                command=["sleep", "infinity"],
                name=name,
                detach=True,
                init=True,  # PID 1 reaps the orphans of killed commands (pids limit!)
                labels=self._labels(),
                user=str(self.run_as),
                working_dir="/workspace",
                volumes={
                    str(self.workspace): {"bind": "/workspace", "mode": "ro" if read_only else "rw"}
                },
                mounts=[
                    Mount(mask.in_sandbox, "/dev/null", type="bind", read_only=True)
                    for mask in masks
                ],
                environment=environment,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                pids_limit=self.pids_limit,
                network_mode=network_mode,
                mem_limit=self.mem_limit,
                memswap_limit=self.mem_limit,  # no swap: over the limit means killed
                nano_cpus=self.nano_cpus,
                read_only=True,
                tmpfs={
                    "/tmp": f"{tmpfs_opts},mode=1777",
                    HOME_DIR: f"{tmpfs_opts},uid={uid},gid={gid},mode=0755",
                },
            )
        except ImageNotFound as exc:
            raise SandboxError(f"image {self.image} not built: run `co-tui sandbox build`") from exc
        except APIError as exc:
            raise SandboxError(f"cannot start the sandbox container: {exc.explanation}") from exc
        self._check_workspace(str(container.id), read_only)
        return str(container.id)

    def _check_workspace(self, container_id: str, read_only: bool) -> None:
        """Fail now, not on every write: the run-as user must reach the mounted workspace
        (rootless engines and user-namespace remapping change who owns what)."""
        api = self.client.api
        check = WORKSPACE_CHECK[read_only]
        exec_id = api.exec_create(container_id, ["/bin/sh", "-c", check])["Id"]
        api.exec_start(exec_id)
        if self._exit_code(exec_id) == 0:
            return
        api.remove_container(container_id, force=True)
        need = "read" if read_only else "write"
        raise SandboxUnavailable(
            f"uid {self.run_as.uid} cannot {need} the workspace {self.workspace} inside the "
            "sandbox container: check its ownership and the engine's user-namespace settings"
        )

    async def _ensure_container(self, read_only: bool) -> str:
        masks = git_config_masks(self.workspace) if read_only else ()
        start = self._starts.get(read_only)
        # The read-only container covers other files, or files the host has since replaced.
        stale = start if read_only and start is not None and masks != self._ro_masks else None
        if start is None or stale or (start.done() and self._started(read_only=read_only) is None):
            if read_only:
                self._ro_masks = masks
            start = asyncio.ensure_future(self._start(read_only, masks, replacing=stale))
            self._starts[read_only] = start
        # Shielded: a cancel during the start leaves the container known, for cleanup.
        return await asyncio.shield(start)

    async def _start(
        self, read_only: bool, masks: tuple[MaskedFile, ...], replacing: asyncio.Task[str] | None
    ) -> str:
        if replacing is not None:
            await self._remove(replacing)
        return await asyncio.to_thread(self._start_container, read_only, masks)

    async def _remove(self, start: asyncio.Future[str]) -> None:
        from docker.errors import NotFound

        try:
            container_id = await start
        except Exception:
            return  # it never started
        with contextlib.suppress(NotFound):
            await asyncio.to_thread(self.client.api.remove_container, container_id, force=True)

    async def cleanup(self) -> None:
        starts, self._starts = self._starts, {}
        container_ids: list[str] = []
        for start in starts.values():
            with contextlib.suppress(Exception):
                container_ids.append(await start)
        if not container_ids:
            return
        from docker.errors import NotFound

        def remove() -> None:
            for container_id in container_ids:
                with contextlib.suppress(NotFound):
                    self.client.api.remove_container(container_id, force=True)

        await asyncio.to_thread(remove)

    # -- commands ----------------------------------------------------------------------
    def _exec(
        self,
        container_id: str,
        cmd: str,
        timeout: float,
        token: str,
        read_only: bool,
        on_output: OutputListener | None = None,
    ) -> _ExecOutcome:
        """One command: exec_create, exec_start (raw socket). Blocking."""
        from docker.utils.socket import frames_iter

        api = self.client.api
        wrapper = READ_ONLY_GIT_GUARD + _WRAPPER if read_only else _WRAPPER
        argv = ["/bin/sh", "-c", wrapper, "co-sandbox", f"{timeout:g}", cmd, token]
        exec_id = api.exec_create(container_id, argv, workdir="/workspace")["Id"]
        sock = api.exec_start(exec_id, socket=True)
        raw = getattr(sock, "_sock", sock)
        raw.settimeout(None)
        collector = OutputCollector(self.output_limit, on_output)
        stuck = threading.Event()

        def watchdog() -> None:
            stuck.set()
            with contextlib.suppress(OSError):
                raw.shutdown(socket.SHUT_RDWR)

        timer = threading.Timer(timeout + STREAM_GRACE, watchdog)
        timer.daemon = True
        timer.start()
        status = b""
        try:
            for stream, data in frames_iter(sock, tty=False):
                if stream == STDERR:
                    status += data
                else:
                    collector.feed(data)
        except OSError:
            if not stuck.is_set():
                raise
        finally:
            timer.cancel()
            with contextlib.suppress(OSError):
                sock.close()
        # The wrapper's own complaints (if any) precede the exit code on stderr.
        match = _EXIT_STATUS.fullmatch(status)
        if match and match.group(1):
            collector.feed(match.group(1))
        exit_code = int(match.group(2)) if match else self._exit_code(exec_id)
        return _ExecOutcome(collector, exit_code, stuck.is_set())

    def _exit_code(self, exec_id: str) -> int | None:
        # The stream can end a moment before the engine records the exit.
        for _ in range(100):
            info = self.client.api.exec_inspect(exec_id)
            if not info.get("Running"):
                return info.get("ExitCode")
            time.sleep(0.005)
        return None

    def _oom_killed_since_last(self, container_id: str) -> bool:
        """Whether the kernel OOM-killed a process in the container since the last check."""
        api = self.client.api
        probe = (
            "cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control "
            "2>/dev/null; true"
        )
        exec_id = api.exec_create(container_id, ["/bin/sh", "-c", probe])["Id"]
        out = api.exec_start(exec_id)
        match = _OOM_KILL.search(out if isinstance(out, bytes) else b"")
        if match is None:
            state = api.inspect_container(container_id).get("State", {})
            return bool(state.get("OOMKilled"))
        kills = int(match.group(1))
        fresh = kills > self._oom_kills.get(container_id, 0)
        self._oom_kills[container_id] = kills
        return fresh

    def _restart(self, container_id: str) -> None:
        self.client.api.restart(container_id, timeout=0)

    def _run_blocking(
        self,
        container_id: str,
        cmd: str,
        timeout: float,
        token: str,
        read_only: bool,
        on_output: OutputListener | None = None,
    ) -> CommandResult:
        from docker.errors import APIError, NotFound

        started = time.monotonic()
        try:
            outcome = self._exec(container_id, cmd, timeout, token, read_only, on_output)
        except NotFound as exc:
            raise ContainerGone("the sandbox container disappeared; it will be recreated") from exc
        except APIError as exc:
            raise SandboxError(f"docker exec failed: {exc.explanation}") from exc
        elapsed = time.monotonic() - started
        if outcome.stream_stuck:
            # Something outside the command's process group kept the output open.
            self._restart(container_id)
        code = outcome.exit_code
        timed_out = outcome.stream_stuck or (code == SIGKILL_EXIT and elapsed >= timeout)
        killed_reason = None
        if code == SIGKILL_EXIT and not timed_out and self._oom_killed_since_last(container_id):
            killed_reason = f"out of memory (the sandbox's memory limit is {self.mem_limit})"
        return CommandResult(
            output=outcome.collector.text(),
            exit_code=code if code is not None else -9,
            timed_out=timed_out,
            truncated=outcome.collector.truncated,
            killed_reason=killed_reason,
        )

    def _cancel_exec(self, container_id: str, token: str) -> None:
        """Kill the process group of the exec named by `token` (blocking)."""
        from docker.errors import APIError

        api = self.client.api
        with contextlib.suppress(APIError):
            exec_id = api.exec_create(container_id, ["/bin/sh", "-c", _CANCEL, "co-cancel", token])
            api.exec_start(exec_id["Id"])

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
        if network and self.network.grantable:
            return await self._run_with_network(cmd, timeout, on_output)
        container_id = await self._ensure_container(read_only)
        try:
            return await self._run_in(container_id, cmd, timeout, read_only, on_output)
        except ContainerGone:
            self._starts.pop(read_only, None)
            raise

    async def _run_with_network(
        self, cmd: str, timeout: float, on_output: OutputListener | None
    ) -> CommandResult:
        """One command in a container of its own on the bridge network, removed after."""
        name = f"{self.container_name}-net-{uuid.uuid4().hex[:8]}"
        start = asyncio.ensure_future(
            asyncio.to_thread(self._start_container, False, name=name, network_mode="bridge")
        )
        try:
            container_id = await asyncio.shield(start)  # a cancel leaves it known, for removal
            return await self._run_in(container_id, cmd, timeout, False, on_output)
        finally:
            removing = asyncio.ensure_future(self._remove(start))
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(removing)

    async def _run_in(
        self,
        container_id: str,
        cmd: str,
        timeout: float,
        read_only: bool,
        on_output: OutputListener | None,
    ) -> CommandResult:
        token = uuid.uuid4().hex
        try:
            return await asyncio.to_thread(
                self._run_blocking,
                container_id,
                cmd,
                timeout,
                token,
                read_only,
                _in_loop(on_output),
            )
        except asyncio.CancelledError:
            # The exec's thread cannot be interrupted: kill the command where it runs.
            kill = asyncio.to_thread(self._cancel_exec, container_id, token)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(kill), CANCEL_WAIT)
            raise


def _in_loop(on_output: OutputListener | None) -> OutputListener | None:
    """`on_output`, called from the exec's thread but run in this event loop's."""
    if on_output is None:
        return None
    loop = asyncio.get_running_loop()

    def told(text: str) -> None:
        loop.call_soon_threadsafe(on_output, text)

    return told


def connect(timeout: float = 2.0) -> Any:
    """A docker client for the engine of DOCKER_HOST (or the default socket); raises
    docker.errors.DockerException when no engine answers within `timeout` seconds."""
    import docker

    client = docker.from_env(timeout=timeout)
    client.ping()
    return client


def engine_address() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
