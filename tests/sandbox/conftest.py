"""Fixtures for the sandbox tests: real Docker engine, real bubblewrap, no mocks.

Locally a missing engine, image or bwrap skips with the reason; in CI (CO_TUI_CI=1) it
fails, because CI installs all of them (.ci/setup.d/20-docker.sh).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.sandbox.base import SandboxProtocol
from tests.helpers import engine_unavailable

IMAGE = os.environ.get("CO_TUI_TEST_SANDBOX_IMAGE", "co-tui-sandbox")
# Who owns the test workspaces when the tests run as root (then commands run as the owner).
OWNER_UID = 1000


unavailable = engine_unavailable


def sandbox_uid() -> int:
    """The uid sandboxed commands run as in `workspace`: the invoking user, or under root
    the workspace's owner."""
    return OWNER_UID if os.geteuid() == 0 else os.getuid()


def make_workspace(owner: int | None = None, parent: str = "/tmp") -> Path:
    """A directory outside pytest's 0700 tmp tree, owned by `owner` (when running as root)."""
    path = Path(tempfile.mkdtemp(prefix="co-sandbox-ws-", dir=parent))
    path.chmod(0o755)
    if os.geteuid() == 0:
        uid = OWNER_UID if owner is None else owner
        os.chown(path, uid, uid)
    return path


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A workspace the sandbox user can reach and write, also when tests run as root."""
    path = make_workspace()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def docker_client() -> Iterator[Any]:
    from co_tui.sandbox.select import probe_docker

    client, why = probe_docker(IMAGE)
    if client is None:
        unavailable(why or "Docker unavailable")
    yield client
    client.close()


@pytest.fixture
def bwrap_ready(workspace: Path) -> None:
    from co_tui.sandbox.bwrap import probe

    if why := probe(workspace):
        unavailable(why)


def new_session_id() -> str:
    return str(uuid.uuid4())


def make_sandbox(kind: str, workspace: Path, request: pytest.FixtureRequest, **kw: Any) -> Any:
    if kind == "docker":
        from co_tui.sandbox.docker import DockerSandbox

        client = request.getfixturevalue("docker_client")
        return DockerSandbox(
            workspace, session_id=new_session_id(), client=client, image=IMAGE, **kw
        )
    request.getfixturevalue("bwrap_ready")
    from co_tui.sandbox.bwrap import BwrapSandbox

    return BwrapSandbox(workspace, **kw)


@pytest.fixture(
    params=[
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
    ]
)
async def sandbox(
    request: pytest.FixtureRequest, workspace: Path
) -> AsyncIterator[SandboxProtocol]:
    """Each isolating backend, with a small memory limit so the memory test is quick."""
    box = make_sandbox(request.param, workspace, request, mem_limit="256m")
    yield box
    await box.cleanup()


@pytest.fixture
def host_listener() -> Iterator[int]:
    """A TCP server on every host address: if the sandbox had any network, it could reach it."""
    server = socket.create_server(("0.0.0.0", 0))
    server.settimeout(0.2)
    port = server.getsockname()[1]
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield port
    stop.set()
    thread.join()
    server.close()


def host_addresses() -> list[str]:
    addresses = {"127.0.0.1"}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: picks the outgoing address
            addresses.add(probe.getsockname()[0])
        except OSError:
            pass
    addresses.add("172.17.0.1")  # the default docker bridge gateway
    return sorted(addresses)


def reach_script(port: int) -> str:
    """Python for inside a sandbox: prints `reached [...]`, the host addresses (all on this
    machine) where it could open a TCP connection to `port`."""
    return (
        "import socket\n"
        "ok = []\n"
        f"for host in {host_addresses()!r}:\n"
        "    try:\n"
        f"        socket.create_connection((host, {port}), timeout=2).close()\n"
        "        ok.append(host)\n"
        "    except OSError:\n"
        "        pass\n"
        "print('reached', ok)\n"
    )
