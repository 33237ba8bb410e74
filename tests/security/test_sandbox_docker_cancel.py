"""Cancelling a turn stops its Docker command inside the container, not only the wait."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.sandbox.docker import DockerSandbox
from tests.sandbox.conftest import IMAGE

pytestmark = pytest.mark.docker
# Counts the commands' sleeps (not the container's own `sleep infinity`).
SLEEPS = "ps -e -o args= | grep -c '^[s]leep [0-9]'"


@pytest.fixture
async def box(docker_client: Any, workspace: Path) -> AsyncIterator[DockerSandbox]:
    sandbox = DockerSandbox(
        workspace, session_id=str(uuid.uuid4()), client=docker_client, image=IMAGE
    )
    await sandbox.run_command("true")  # a warm container: the cancel hits the exec
    yield sandbox
    await sandbox.cleanup()


async def cancel_after(box: DockerSandbox, cmd: str, delay: float, **kw: Any) -> None:
    task = asyncio.create_task(box.run_command(cmd, **kw))
    await asyncio.sleep(delay)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize(
    "cmd",
    [
        "sleep 1; touch late",
        "(sleep 1; touch late) & sleep 30",
        "sh -c 'sleep 1; touch late' & wait",
    ],
)
async def test_a_cancelled_command_never_finishes(
    box: DockerSandbox, workspace: Path, cmd: str
) -> None:
    await cancel_after(box, f"touch started; {cmd}", 0.5)
    assert (workspace / "started").exists()  # it was running when cancelled
    await asyncio.sleep(2)
    assert not (workspace / "late").exists()
    processes = await box.run_command(SLEEPS)
    assert processes.output.strip() == "0", "a sleep of the cancelled command still runs"


async def test_a_command_cancelled_at_once_never_finishes(
    box: DockerSandbox, workspace: Path
) -> None:
    """The cancel may reach the container before the command's group exists."""
    for delay in (0, 0.01, 0.02, 0.05, 0.1):
        await cancel_after(box, "sleep 0.5; touch late", delay)
    await asyncio.sleep(1)
    assert not (workspace / "late").exists()
    assert (await box.run_command(SLEEPS)).output == "0\n"


async def test_a_cancelled_read_only_command_is_stopped_too(
    box: DockerSandbox, workspace: Path
) -> None:
    await box.run_command("true", read_only=True)
    await cancel_after(box, "sleep 30", 0.5, read_only=True)
    left = await box.run_command(SLEEPS, read_only=True)
    assert left.output.strip() == "0"


async def test_a_non_zero_exit_still_returns_its_result(box: DockerSandbox) -> None:
    result = await box.run_command("echo out; exit 3")
    assert (result.output, result.exit_code) == ("out\n", 3)
    assert result.for_model(120) == "out\n[exit code 3]"
