"""Read-only runs (the auto-approved commands): whatever flags a command passes, it changes
no file of the workspace and reaches no network. Real Docker and real bubblewrap."""

from __future__ import annotations

import os
import shlex
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.sandbox.base import SandboxError, SandboxProtocol
from co_tui.sandbox.docker import LABEL_OWNER, DockerSandbox
from tests.sandbox.conftest import IMAGE, reach_script
from tests.security.hostile import ATTACKS, hostile_workspace, tree_digest

HOSTILE = [
    *ATTACKS,
    "touch x",
    "rm victim.txt",
    "git config core.pwned true",
    "echo '[alias] st = !touch PWNED' >> .git/config",
    'echo \'{"sandbox_backend": "subprocess"}\' > .co-tui/settings.json',
    "mkdir -p .co-tui/skills && echo x > .co-tui/skills/new.md",
    "chmod 777 victim.txt",
    "ln -s /etc/passwd link",
    "mv victim.txt moved.txt",
]
FSMONITOR_HOOK = "#!/bin/sh\necho FSMONITOR-RAN >&2\ntouch /tmp/fsmonitor-ran\n"
RAN = "test -e /tmp/fsmonitor-ran && echo HOOK-RAN; true"


@pytest.fixture
def repo() -> Iterator[Path]:
    with hostile_workspace() as path:
        yield path


def open_sandbox(kind: str, repo: Path, request: pytest.FixtureRequest, **kw: Any) -> Any:
    if kind == "docker":
        client = request.getfixturevalue("docker_client")
        session = str(uuid.uuid4())
        return DockerSandbox(repo, session_id=session, client=client, image=IMAGE, **kw)
    from co_tui.sandbox.bwrap import BwrapSandbox, probe

    if why := probe(repo):
        pytest.fail(f"bwrap cannot run in the hostile workspace: {why}")
    request.getfixturevalue("bwrap_ready")
    return BwrapSandbox(repo, **kw)


@pytest.fixture(
    params=[
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
    ]
)
async def box(request: pytest.FixtureRequest, repo: Path) -> AsyncIterator[SandboxProtocol]:
    sandbox = open_sandbox(request.param, repo, request)
    yield sandbox
    await sandbox.cleanup()


async def test_hostile_commands_change_nothing(box: SandboxProtocol, repo: Path) -> None:
    before = tree_digest(repo)
    changed: list[str] = []
    for cmd in HOSTILE:
        await box.run_command(cmd, timeout=30, read_only=True)
        if tree_digest(repo) != before:
            changed.append(cmd)
    assert changed == [], f"read-only runs changed the workspace: {changed}"


async def test_the_same_commands_do_write_when_not_read_only(
    box: SandboxProtocol, repo: Path
) -> None:
    """The attacks are real: outside the read-only view they change the workspace."""
    for cmd in ("rg --pre rm . victim.txt", "git branch -D feature", "touch x"):
        before = tree_digest(repo)
        result = await box.run_command(cmd, timeout=30)
        assert tree_digest(repo) != before, f"{cmd!r} wrote nothing: {result.output}"


async def test_a_hostile_fsmonitor_in_the_repo_config_does_not_run(
    box: SandboxProtocol, repo: Path
) -> None:
    hook = repo / "hook.sh"
    hook.write_text(FSMONITOR_HOOK)
    hook.chmod(0o755)
    with (repo / ".git" / "config").open("a") as config:
        config.write("[core]\n\tfsmonitor = /workspace/hook.sh\n")
    owner = repo.stat()
    os.chown(hook, owner.st_uid, owner.st_gid)
    ran = await box.run_command(f"git status >/dev/null; {RAN}", timeout=30)
    assert "HOOK-RAN" in ran.output, f"the hook does not run even unguarded: {ran.output}"
    before = tree_digest(repo)  # (that status refreshed .git/index)
    result = await box.run_command(f"git status --short; {RAN}", timeout=30, read_only=True)
    assert "FSMONITOR-RAN" not in result.output and "HOOK-RAN" not in result.output, result.output
    assert " M victim.txt" in result.output  # git status itself still works
    assert tree_digest(repo) == before


async def test_git_reads_still_work_read_only(box: SandboxProtocol) -> None:
    result = await box.run_command(
        "git diff --stat && git log --oneline -1 && git branch", read_only=True
    )
    assert result.exit_code == 0, result.output
    assert "victim.txt" in result.output and "initial" in result.output
    assert "feature" in result.output


async def test_a_failing_command_still_returns_its_result(box: SandboxProtocol) -> None:
    result = await box.run_command("touch x", read_only=True)
    assert result.exit_code != 0
    assert "Read-only file system" in result.output


@pytest.mark.docker
async def test_read_only_docker_container_is_separate_hardened_and_offline(
    docker_client: Any, repo: Path, host_listener: int
) -> None:
    box = DockerSandbox(
        repo, session_id=str(uuid.uuid4()), client=docker_client, image=IMAGE, network="bridge"
    )
    try:
        assert box.ro_container_id is None
        await box.run_command("true")
        assert box.ro_container_id is None  # started on the first read-only command only
        script = reach_script(host_listener)
        curl = f"curl -sS --max-time 2 http://127.0.0.1:{host_listener}/ && echo CURL-OK"
        result = await box.run_command(
            f"python3 -c {shlex.quote(script)}; {curl}; cat /proc/net/dev", read_only=True
        )
        assert "reached []" in result.output, result.output
        assert "CURL-OK" not in result.output
        ro_id = box.ro_container_id
        assert ro_id is not None and ro_id != box.container_id
        await box.run_command("true", read_only=True)
        assert box.ro_container_id == ro_id  # reused

        main = docker_client.api.inspect_container(box.container_id)
        ro = docker_client.api.inspect_container(ro_id)
        assert main["HostConfig"]["NetworkMode"] == "bridge"
        assert ro["HostConfig"]["NetworkMode"] == "none"
        for key in ("CapDrop", "SecurityOpt", "PidsLimit", "ReadonlyRootfs", "Memory"):
            assert ro["HostConfig"][key] == main["HostConfig"][key], key
        assert ro["Config"]["User"] == main["Config"]["User"] == str(box.run_as)
        assert ro["Config"]["Labels"][LABEL_OWNER] == "1"
        mounts = {m["Destination"]: (m["Source"], m["RW"]) for m in ro["Mounts"]}
        assert mounts == {
            "/workspace": (str(repo.resolve()), False),
            "/workspace/.git/config": ("/dev/null", False),  # git reads no repository config
        }
    finally:
        await box.cleanup()
    from docker.errors import NotFound

    with pytest.raises(NotFound):
        docker_client.containers.get(ro_id)


async def test_the_subprocess_backend_refuses_read_only_runs(repo: Path) -> None:
    from co_tui.sandbox import SubprocessSandbox

    before = tree_digest(repo)
    with pytest.raises(SandboxError, match="no read-only view"):
        await SubprocessSandbox(repo).run_command("touch x", read_only=True)
    assert tree_digest(repo) == before
