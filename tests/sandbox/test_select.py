"""Backend selection: auto picks the first backend that works; a configured backend that
does not work falls back to subprocess with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from co_tui.sandbox.select import select_sandbox
from tests.sandbox.conftest import IMAGE


@pytest.mark.docker
async def test_auto_picks_docker_when_the_engine_and_image_exist(
    docker_client: Any, workspace: Path
) -> None:
    choice = select_sandbox("auto", workspace, session_id="sel-auto-1", image=IMAGE)
    assert choice.sandbox.name == "docker"
    assert choice.sandbox.isolation_level == "full"
    assert choice.skipped == {}
    assert (await choice.sandbox.run_command("echo hi")).output == "hi\n"
    await choice.sandbox.cleanup()


@pytest.mark.docker
def test_missing_image_is_skipped_with_the_build_command(
    docker_client: Any, workspace: Path
) -> None:
    choice = select_sandbox("docker", workspace, session_id="sel-img-1", image="co-tui-nope")
    assert choice.sandbox.name == "subprocess"
    assert choice.skipped["docker"] == "image co-tui-nope not built: run `co-tui sandbox build`"
    assert choice.reason == "fallback: the configured backend docker does not work here"


def test_configured_docker_without_an_engine_falls_back(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    choice = select_sandbox("docker", workspace, session_id="sel-noengine")
    assert choice.sandbox.name == "subprocess"
    assert choice.sandbox.isolation_level == "none"
    assert choice.skipped == {
        "docker": "no Docker engine answers at unix:///nonexistent/docker.sock"
    }
    assert "fallback" in choice.reason


def test_configured_bwrap_not_installed_falls_back(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    choice = select_sandbox("bwrap", workspace, session_id="sel-nobwrap")
    assert choice.sandbox.name == "subprocess"
    assert choice.skipped["bwrap"].startswith("bwrap not installed")
    assert "docker" not in choice.skipped  # not asked for, not probed


@pytest.mark.bwrap
def test_auto_without_docker_picks_bwrap(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, bwrap_ready: None
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    choice = select_sandbox("auto", workspace, session_id="sel-bwrap")
    assert choice.sandbox.name == "bwrap"
    assert choice.sandbox.isolation_level == "namespace"
    assert "no Docker engine answers" in choice.skipped["docker"]


def test_subprocess_when_configured(workspace: Path) -> None:
    choice = select_sandbox("subprocess", workspace, session_id="sel-sub")
    assert (choice.sandbox.name, choice.reason, choice.skipped) == ("subprocess", "configured", {})


@pytest.mark.docker
def test_docker_is_skipped_when_uid_1000_cannot_write_the_workspace(
    docker_client: Any, tmp_path: Path
) -> None:
    workspace = tmp_path / "private"
    workspace.mkdir(mode=0o700)
    if workspace.stat().st_uid == 1000:
        pytest.skip("the tests run as uid 1000: every workspace of ours is writable")
    choice = select_sandbox("docker", workspace, session_id="sel-ws", image=IMAGE)
    assert choice.sandbox.name == "subprocess"
    assert "not writable by the sandbox user (uid 1000)" in choice.skipped["docker"]
