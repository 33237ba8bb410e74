"""Sandboxed commands never run as root: as the invoking user, or under root as the
workspace's owner; a workspace owned by root is refused with the fix, and a configured
backend that cannot run is an error, never a silent run without isolation."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from co_tui.sandbox import SandboxUnavailable, select_sandbox
from tests.sandbox.conftest import IMAGE, make_workspace

BACKENDS = [
    pytest.param("docker", marks=pytest.mark.docker),
    pytest.param("bwrap", marks=pytest.mark.bwrap),
]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="creating other users' files needs root")


@pytest.fixture
def engine(request: pytest.FixtureRequest, backend: str) -> None:
    """The backend's engine is there (skip locally, fail under CO_TUI_CI=1)."""
    request.getfixturevalue("docker_client" if backend == "docker" else "bwrap_ready")


@pytest.fixture
def owned_by(request: pytest.FixtureRequest) -> Iterator[Path]:
    path = make_workspace(owner=request.param)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@needs_root
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("owned_by", [1000, 1234], indirect=True)
async def test_commands_run_as_the_workspace_owner(
    backend: str, owned_by: Path, engine: None
) -> None:
    owner = owned_by.stat().st_uid
    choice = select_sandbox(backend, owned_by, session_id=str(uuid.uuid4()), image=IMAGE)
    assert choice.sandbox.name == backend
    try:
        result = await choice.sandbox.run_command("touch x && id -u && id -G")
    finally:
        await choice.sandbox.cleanup()
    uid, groups = result.output.splitlines()
    assert uid == str(owner)
    assert "0" not in groups.split()
    assert (owned_by / "x").stat().st_uid == owner


@needs_root
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("owned_by", [0], indirect=True)
def test_a_workspace_owned_by_root_is_refused_with_the_fix(
    backend: str, owned_by: Path, engine: None
) -> None:
    with pytest.raises(SandboxUnavailable) as raised:
        select_sandbox(backend, owned_by, session_id="runas-root", image=IMAGE)
    message = str(raised.value)
    assert f"the workspace {owned_by} is owned by root" in message
    assert "co-tui never runs sandboxed commands as root" in message
    assert f"`chown -R <user> {owned_by}`" in message
    assert "set sandbox_backend to subprocess" in message
    assert "\n" not in message
    assert not (owned_by / "x").exists()


@needs_root
@pytest.mark.parametrize("owned_by", [0], indirect=True)
def test_the_sandboxes_themselves_refuse_a_root_owned_workspace(owned_by: Path) -> None:
    from co_tui.sandbox.bwrap import BwrapSandbox
    from co_tui.sandbox.docker import DockerSandbox

    with pytest.raises(SandboxUnavailable, match="owned by root"):
        BwrapSandbox(owned_by)
    with pytest.raises(SandboxUnavailable, match="owned by root"):
        DockerSandbox(owned_by, session_id="runas-direct", client=None)  # type: ignore[arg-type]


@needs_root
@pytest.mark.parametrize("owned_by", [0], indirect=True)
def test_auto_with_a_root_owned_workspace_falls_back_with_a_warning(owned_by: Path) -> None:
    choice = select_sandbox("auto", owned_by, session_id="runas-auto", image=IMAGE)
    assert choice.sandbox.name == "subprocess"
    assert set(choice.skipped) == {"docker", "bwrap"}
    assert "owned by root" in choice.skipped["docker"]
    assert choice.warning == (
        f"no sandbox: commands run on this machine unisolated ({choice.skipped['docker']})"
    )


@pytest.fixture
def behind_a_private_dir() -> Iterator[Path]:
    """A workspace its owner (1234) may write, under a root-only 0700 directory."""
    private = Path(tempfile.mkdtemp(prefix="co-private-", dir="/tmp"))
    private.chmod(0o700)
    workspace = private / "ws"
    workspace.mkdir(mode=0o755)
    os.chown(workspace, 1234, 1234)
    yield workspace
    shutil.rmtree(private, ignore_errors=True)


@needs_root
@pytest.mark.bwrap
def test_bwrap_probe_refuses_a_workspace_its_user_cannot_reach(
    behind_a_private_dir: Path, bwrap_ready: None
) -> None:
    from co_tui.sandbox.bwrap import probe

    why = probe(behind_a_private_dir)
    assert why is not None
    with pytest.raises(SandboxUnavailable, match='sandbox_backend is "bwrap" but it does not'):
        select_sandbox("bwrap", behind_a_private_dir, session_id="runas-private")


NON_ROOT_SESSION = textwrap.dedent(
    """
    import asyncio, os, sys
    from pathlib import Path
    from co_tui.sandbox import select_sandbox

    choice = select_sandbox("bwrap", Path(sys.argv[1]), session_id="non-root")
    argv = choice.sandbox.argv("true")
    result = asyncio.run(choice.sandbox.run_command("touch x && id -u"))
    print(os.getuid(), "setpriv" in " ".join(argv), result.output.strip(), result.exit_code)
    """
)


@needs_root
@pytest.mark.bwrap
@pytest.mark.parametrize("owned_by", [1000], indirect=True)
def test_a_non_root_user_runs_commands_as_itself(owned_by: Path, bwrap_ready: None) -> None:
    """co-tui started by uid 1000 (setpriv here): bwrap maps that uid, no setpriv inside."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:  # the test venv's python may sit under root's home
        pytest.skip("no system python3 a non-root user can run")
    src = Path(sys.modules["co_tui"].__file__ or "").resolve().parents[1]
    drop = ["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "--"]
    proc = subprocess.run(
        [*drop, python, "-c", NON_ROOT_SESSION, str(owned_by)],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1000", "False", "1000", "0"]
    assert (owned_by / "x").stat().st_uid == 1000
