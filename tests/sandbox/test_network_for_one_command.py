"""One command with the network on (the dialog's "approve with network"), in each isolating
backend: that command reaches a listener on this machine; the commands before and after it,
and read-only runs, reach nothing."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from co_tui.sandbox.base import SandboxError, SandboxProtocol
from tests.sandbox.conftest import reach_script


def _reach(port: int) -> str:
    return f"python3 -c {shlex.quote(reach_script(port))}"


async def test_only_the_command_granted_network_reaches_it(
    sandbox: SandboxProtocol, host_listener: int
) -> None:
    assert sandbox.network.mode == "none" and sandbox.network.grantable
    before = await sandbox.run_command(_reach(host_listener), timeout=30)
    granted = await sandbox.run_command(_reach(host_listener), timeout=30, network=True)
    after = await sandbox.run_command(_reach(host_listener), timeout=30)
    assert "reached []" in before.output, before.output
    assert "reached []" not in granted.output and "reached [" in granted.output, granted.output
    assert "reached []" in after.output, after.output


async def test_a_read_only_run_never_has_network(sandbox: SandboxProtocol) -> None:
    with pytest.raises(SandboxError, match="never has network"):
        await sandbox.run_command("true", read_only=True, network=True)


async def test_the_granted_command_writes_the_workspace_as_the_sandbox_user(
    sandbox: SandboxProtocol, workspace: Any
) -> None:
    result = await sandbox.run_command("id -u > who && cat who", network=True)
    assert result.exit_code == 0, result.output
    assert (workspace / "who").read_text().strip() == result.output.strip() != "0"


@pytest.mark.docker
async def test_docker_gives_it_a_container_of_its_own_removed_after(
    docker_client: Any, workspace: Any, host_listener: int
) -> None:
    from co_tui.sandbox.docker import LABEL_SESSION, DockerSandbox
    from tests.sandbox.conftest import IMAGE, new_session_id

    box = DockerSandbox(workspace, session_id=new_session_id(), client=docker_client, image=IMAGE)
    try:
        await box.run_command("true")
        granted = await box.run_command(_reach(host_listener), timeout=30, network=True)
        assert "reached []" not in granted.output, granted.output
        mine = docker_client.containers.list(
            all=True, filters={"label": f"{LABEL_SESSION}={box.session_id}"}
        )
        assert [c.name for c in mine] == [box.container_name]  # the -net one is gone
        assert mine[0].attrs["HostConfig"]["NetworkMode"] == "none"
    finally:
        await box.cleanup()
