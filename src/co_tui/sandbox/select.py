"""Pick the sandbox backend: the configured one, or under "auto" the first that works.

Order under "auto": docker (the engine answers and the image exists), bwrap (installed, and
a probe in the sandbox finds the workspace writable; the sandbox probed is the one used),
then subprocess (no isolation), which then carries a warning to show. Both isolating
backends run commands as the user chosen by runas.py, never as root. Every backend not used
is listed in `SandboxChoice.skipped` with the reason. A configured backend that does not
work raises SandboxUnavailable naming the reason and the fix: never a silent fallback to
less isolation. Probes use short timeouts: this runs when the app starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from co_tui.sandbox.base import SandboxProtocol, SandboxUnavailable
from co_tui.sandbox.runas import RunAs, pick_run_as
from co_tui.sandbox.subprocess import SubprocessSandbox

PROBE_TIMEOUT = 2.0
API_TIMEOUT = 120.0  # once the engine answered: container creation can be slow on a busy host
ISOLATING = ("docker", "bwrap")


@dataclass
class SandboxChoice:
    sandbox: SandboxProtocol
    reason: str
    skipped: dict[str, str] = field(default_factory=dict)  # backend -> why it was not used
    warning: str | None = None  # for the user, all the time: commands run unisolated


def _docker_socket_missing() -> str | None:
    """Cheap pre-check (no import of the SDK): the default socket is simply not there."""
    host = os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        return None
    path = host.removeprefix("unix://") or "/var/run/docker.sock"
    if not Path(path).exists():
        return f"no Docker engine answers at unix://{path}"
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


def _configured_fails(backend: str, why: str) -> SandboxUnavailable:
    return SandboxUnavailable(
        f'sandbox_backend is "{backend}" but it does not work here: {why}. Fix that, or '
        'choose another sandbox_backend ("subprocess": no isolation, every command asks)'
    )


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
    """Raises SandboxUnavailable when the configured docker or bwrap backend cannot work."""
    if backend not in (*ISOLATING, "auto", "subprocess"):
        raise SandboxUnavailable(
            f"unknown sandbox_backend {backend!r}: use auto, docker, bwrap or subprocess"
        )
    skipped: dict[str, str] = {}
    run_as: RunAs | None = None
    if backend != "subprocess":
        try:
            run_as = pick_run_as(workspace)
        except SandboxUnavailable as refusal:
            if backend in ISOLATING:
                raise SandboxUnavailable(f'sandbox_backend is "{backend}" but {refusal}') from None
            skipped = dict.fromkeys(ISOLATING, str(refusal))
    if run_as is not None and backend in ("auto", "docker"):
        client, why = probe_docker(image)
        if client is not None:
            from co_tui.sandbox.docker import DockerSandbox

            sandbox = DockerSandbox(
                workspace,
                session_id=session_id,
                client=client,
                image=image,
                network=network,
                mem_limit=mem_limit,
                cpus=cpus,
                output_limit=output_limit,
                run_as=run_as,
            )
            reason = "configured" if backend == "docker" else "auto: Docker engine and image found"
            return SandboxChoice(sandbox, reason, skipped)
        if backend == "docker":
            raise _configured_fails(backend, why or "unavailable")
        skipped["docker"] = why or "unavailable"
    if run_as is not None and backend in ("auto", "bwrap"):
        from co_tui.sandbox.bwrap import probed_sandbox

        bwrap, why = probed_sandbox(
            workspace, run_as=run_as, mem_limit=mem_limit, output_limit=output_limit
        )
        if bwrap is not None:
            reason = "configured" if backend == "bwrap" else "auto: bubblewrap works here"
            return SandboxChoice(bwrap, reason, skipped)
        if backend == "bwrap":
            raise _configured_fails(backend, why or "unavailable")
        skipped["bwrap"] = why or "unavailable"
    fallback = SubprocessSandbox(workspace, output_limit)
    if backend == "subprocess":
        return SandboxChoice(fallback, "configured", skipped)
    reasons = set(skipped.values())
    if len(reasons) == 1:  # the workspace refused for both
        detail = reasons.pop()
    else:
        detail = "; ".join(f"{name}: {why}" for name, why in skipped.items())
    warning = f"no sandbox: commands run on this machine unisolated ({detail})"
    return SandboxChoice(fallback, "fallback: no isolating backend works here", skipped, warning)
