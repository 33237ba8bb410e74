"""Backend selection: auto picks the first backend that works and warns when none does; a
configured backend that does not work raises SandboxUnavailable with the reason and the
fix, never a fallback to less isolation."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.sandbox import SandboxUnavailable
from co_tui.sandbox.select import select_sandbox
from tests.sandbox.conftest import IMAGE, make_workspace


@pytest.fixture
def no_engines(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH


@pytest.fixture
def unwritable_workspace() -> Iterator[Path]:
    """Owned by the user commands would run as, who may not write it."""
    path = make_workspace()
    path.chmod(0o555)
    yield path
    path.chmod(0o755)
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.docker
async def test_auto_picks_docker_when_the_engine_and_image_exist(
    docker_client: Any, workspace: Path
) -> None:
    choice = select_sandbox("auto", workspace, session_id="sel-auto-1", image=IMAGE)
    assert choice.sandbox.name == "docker"
    assert choice.sandbox.isolation_level == "full"
    assert choice.skipped == {}
    assert choice.warning is None
    assert (await choice.sandbox.run_command("echo hi")).output == "hi\n"
    await choice.sandbox.cleanup()


@pytest.mark.docker
def test_configured_docker_without_its_image_raises_with_the_build_command(
    docker_client: Any, workspace: Path
) -> None:
    with pytest.raises(SandboxUnavailable) as raised:
        select_sandbox("docker", workspace, session_id="sel-img-1", image="co-tui-nope")
    message = str(raised.value)
    assert message.startswith('sandbox_backend is "docker" but it does not work here')
    assert "image co-tui-nope not built: run `co-tui sandbox build`" in message


def test_configured_docker_without_an_engine_raises(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxUnavailable, match="no Docker engine answers at unix:///nonexist"):
        select_sandbox("docker", workspace, session_id="sel-noengine")


def test_configured_bwrap_not_installed_raises(workspace: Path, no_engines: None) -> None:
    with pytest.raises(SandboxUnavailable, match="bwrap not installed") as raised:
        select_sandbox("bwrap", workspace, session_id="sel-nobwrap")
    assert '"subprocess": no isolation, every command asks' in str(raised.value)


def test_auto_with_no_isolating_backend_falls_back_with_a_warning(
    workspace: Path, no_engines: None
) -> None:
    choice = select_sandbox("auto", workspace, session_id="sel-none")
    assert choice.sandbox.name == "subprocess"
    assert choice.reason == "fallback: no isolating backend works here"
    assert set(choice.skipped) == {"docker", "bwrap"}
    assert choice.warning == (
        "no sandbox: commands run on this machine unisolated "
        f"(docker: {choice.skipped['docker']}; bwrap: {choice.skipped['bwrap']})"
    )


@pytest.mark.bwrap
def test_auto_without_docker_picks_bwrap(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, bwrap_ready: None
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    choice = select_sandbox("auto", workspace, session_id="sel-bwrap")
    assert choice.sandbox.name == "bwrap"
    assert choice.sandbox.isolation_level == "namespace"
    assert "no Docker engine answers" in choice.skipped["docker"]
    assert choice.warning is None


def test_subprocess_when_configured(workspace: Path) -> None:
    choice = select_sandbox("subprocess", workspace, session_id="sel-sub")
    assert (choice.sandbox.name, choice.reason, choice.skipped) == ("subprocess", "configured", {})
    assert choice.warning is None


@pytest.mark.parametrize("backend", ["docker", "bwrap"])
def test_a_workspace_its_user_cannot_write_is_refused(
    backend: str, unwritable_workspace: Path
) -> None:
    with pytest.raises(SandboxUnavailable, match="not writable by") as raised:
        select_sandbox(backend, unwritable_workspace, session_id="sel-ws", image=IMAGE)
    assert "set sandbox_backend to subprocess" in str(raised.value)
