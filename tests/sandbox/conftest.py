"""Fixtures for the sandbox tests: real Docker engine, real bubblewrap, no mocks.

Locally a missing engine, image or bwrap skips with the reason; in CI (CO_TUI_CI=1) it
fails, because CI installs all of them (.ci/setup.d/20-docker.sh).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.sandbox.base import SandboxProtocol
from tests.helpers import engine_unavailable

IMAGE = os.environ.get("CO_TUI_TEST_SANDBOX_IMAGE", "co-tui-sandbox")
SANDBOX_UID = 1000


unavailable = engine_unavailable


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A workspace the sandbox user (uid 1000) can reach and write, also when tests run
    as root: outside pytest's 0700 tmp tree, owned by uid 1000."""
    path = Path(tempfile.mkdtemp(prefix="co-sandbox-ws-", dir="/tmp"))
    path.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(path, SANDBOX_UID, SANDBOX_UID)
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
