"""Pick the sandbox backend: the configured one, or under "auto" the first that works.

Order under "auto": docker (the engine answers, the image exists and uid 1000 can write
the workspace), bwrap (installed and
a trivial command runs), then subprocess (no isolation). Every backend not used is listed
in `SandboxChoice.skipped` with the reason. A configured backend that does not work falls
back to subprocess with the reason, never a crash. Probes use short timeouts: this runs
when the app starts.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from co_tui.sandbox.base import SandboxProtocol
from co_tui.sandbox.subprocess import SubprocessSandbox

SANDBOX_UID = 1000
PROBE_TIMEOUT = 2.0
API_TIMEOUT = 120.0  # once the engine answered: container creation can be slow on a busy host


@dataclass
class SandboxChoice:
    sandbox: SandboxProtocol
    reason: str
    skipped: dict[str, str] = field(default_factory=dict)  # backend -> why it was not used


def _docker_socket_missing() -> str | None:
    """Cheap pre-check (no import of the SDK): the default socket is simply not there."""
    host = os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        return None
    path = host.removeprefix("unix://") or "/var/run/docker.sock"
    if not Path(path).exists():
        return f"no Docker engine answers at unix://{path}"
    return None


def workspace_problem(workspace: Path) -> str | None:
    """Why the container user (uid 1000) could not write the bind-mounted workspace, if so.

    Docker Desktop (macOS) maps ownership through its file sharing: no check there."""
    if sys.platform == "darwin":
        return None
    try:
        st = workspace.stat()
    except OSError as exc:
        return f"cannot inspect the workspace {workspace}: {exc.strerror}"
    if st.st_uid == SANDBOX_UID:
        need = stat.S_IWUSR | stat.S_IXUSR
    elif st.st_gid == SANDBOX_UID:
        need = stat.S_IWGRP | stat.S_IXGRP
    else:
        need = stat.S_IWOTH | stat.S_IXOTH
    if st.st_mode & need != need:
        return f"the workspace {workspace} is not writable by the sandbox user (uid {SANDBOX_UID})"
    return None


def probe_docker(image: str, timeout: float = PROBE_TIMEOUT) -> tuple[Any | None, str | None]:
    """(client, None) when the engine answers and `image` exists, else (None, why not)."""
    if why := _docker_socket_missing():
        return None, why
    try:
        from co_tui.sandbox.docker import connect, engine_address
    except ImportError:  # pragma: no cover - docker is a declared dependency
        return None, "the docker Python package is not installed"
    from docker.errors import DockerException, ImageNotFound

    try:
        client = connect(timeout)
    except DockerException:
        return None, f"no Docker engine answers at {engine_address()}"
    except Exception as exc:  # a broken DOCKER_HOST, TLS trouble: report, never crash
        return None, f"Docker engine at {engine_address()} unusable: {exc}"
    try:
        client.images.get(image)
    except ImageNotFound:
        client.close()
        return None, f"image {image} not built: run `co-tui sandbox build`"
    except DockerException as exc:
        client.close()
        return None, f"cannot inspect image {image}: {exc}"
    client.api.timeout = API_TIMEOUT
    return client, None


def select_sandbox(
    backend: str,
    workspace: Path,
    *,
    session_id: str,
    output_limit: int = 100_000,
    image: str = "co-tui-sandbox",
    network: str = "none",
    mem_limit: str = "1g",
    cpus: float = 1.0,
    **_options: object,
) -> SandboxChoice:
    skipped: dict[str, str] = {}
    if backend in ("auto", "docker"):
        client, why = probe_docker(image)
        if client is not None and (why := workspace_problem(workspace)):
            client.close()
            client = None
        if client is not None:
            from co_tui.sandbox.docker import DockerSandbox

            sandbox = DockerSandbox(
                workspace, session_id=session_id, client=client, image=image, network=network,
                mem_limit=mem_limit, cpus=cpus, output_limit=output_limit,
            )  # fmt: skip
            reason = "configured" if backend == "docker" else "auto: Docker engine and image found"
            return SandboxChoice(sandbox, reason, skipped)
        skipped["docker"] = why or "unavailable"
    if backend in ("auto", "bwrap"):
        from co_tui.sandbox.bwrap import BwrapSandbox, probe

        why = probe(workspace)
        if why is None:
            sandbox = BwrapSandbox(workspace, mem_limit=mem_limit, output_limit=output_limit)
            reason = "configured" if backend == "bwrap" else "auto: bubblewrap works here"
            return SandboxChoice(sandbox, reason, skipped)
        skipped["bwrap"] = why
    if backend == "subprocess":
        reason = "configured"
    elif backend == "auto":
        reason = "fallback: no isolating backend works here"
    else:
        reason = f"fallback: the configured backend {backend} does not work here"
    return SandboxChoice(SubprocessSandbox(workspace, output_limit), reason, skipped)
