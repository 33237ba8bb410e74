"""Docker-specific lifecycle: one hardened container per session, reused, removed, and the
containers of crashed sessions cleaned up."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from docker.errors import NotFound

from co_tui.sandbox.docker import LABEL_OWNER, DockerSandbox
from tests.sandbox.conftest import IMAGE, new_session_id, sandbox_uid

pytestmark = pytest.mark.docker


@pytest.fixture
async def docker_sandbox(docker_client: Any, workspace: Path) -> Any:
    box = DockerSandbox(workspace, session_id=new_session_id(), client=docker_client, image=IMAGE)
    yield box
    await box.cleanup()


async def test_container_is_started_once_reused_and_removed(
    docker_sandbox: DockerSandbox, docker_client: Any
) -> None:
    assert docker_sandbox.container_id is None  # nothing starts before the first command
    first = await docker_sandbox.run_command("echo $$ > /tmp/first; hostname")
    container_id = docker_sandbox.container_id
    second = await docker_sandbox.run_command("cat /tmp/first >/dev/null && hostname")
    assert second.exit_code == 0, second.output  # /tmp of the same container
    assert first.output == second.output
    assert docker_sandbox.container_id == container_id
    container = docker_client.containers.get(docker_sandbox.container_name)
    assert container.name == f"co-runner-{docker_sandbox.session_id[:8]}"
    await docker_sandbox.cleanup()
    with pytest.raises(NotFound):
        docker_client.containers.get(container_id)


async def test_container_is_hardened(docker_sandbox: DockerSandbox, docker_client: Any) -> None:
    await docker_sandbox.run_command("true")
    host = docker_client.api.inspect_container(docker_sandbox.container_id)["HostConfig"]
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["PidsLimit"] == 256
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert "/tmp" in host["Tmpfs"]
    assert host["Memory"] == 1 << 30
    assert host["NanoCpus"] == 1_000_000_000
    config = docker_client.api.inspect_container(docker_sandbox.container_id)["Config"]
    assert config["User"] == str(docker_sandbox.run_as)
    assert docker_sandbox.run_as.uid == sandbox_uid() != 0


CRASHING_SESSION = textwrap.dedent(
    """
    import asyncio, os, sys
    from pathlib import Path
    import docker
    from co_tui.sandbox.docker import DockerSandbox

    async def main():
        box = DockerSandbox(Path(sys.argv[1]), session_id=sys.argv[2],
                            client=docker.from_env(), image=sys.argv[3])
        await box.run_command("true")
        print(box.container_name, flush=True)
        os._exit(0)  # a crash: no cleanup

    asyncio.run(main())
    """
)


async def test_containers_of_dead_sessions_are_removed_at_start(
    docker_client: Any, workspace: Path
) -> None:
    dead_session = new_session_id()
    proc = subprocess.run(
        [sys.executable, "-c", CRASHING_SESSION, str(workspace), dead_session, IMAGE],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    stale_name = proc.stdout.strip()
    assert docker_client.containers.get(stale_name).labels[LABEL_OWNER] == "1"

    box = DockerSandbox(workspace, session_id=new_session_id(), client=docker_client, image=IMAGE)
    try:
        await box.run_command("true")
        assert stale_name in box.stale_removed
        with pytest.raises(NotFound):
            docker_client.containers.get(stale_name)
        # A live session's container (ours) is left alone.
        assert docker_client.containers.get(box.container_name)
    finally:
        await box.cleanup()


async def test_a_removed_container_is_reported_then_recreated(
    docker_sandbox: DockerSandbox, docker_client: Any
) -> None:
    from co_tui.sandbox.base import SandboxError

    await docker_sandbox.run_command("true")
    docker_client.api.remove_container(docker_sandbox.container_id, force=True)
    with pytest.raises(SandboxError, match="disappeared"):
        await docker_sandbox.run_command("true")
    assert (await docker_sandbox.run_command("echo back")).output == "back\n"
