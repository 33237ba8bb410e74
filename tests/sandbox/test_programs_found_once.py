"""bwrap and setpriv are found once, in PATH's absolute directories, when the sandbox is made,
and run by that path: a `bwrap` or `setpriv` put earlier on PATH afterwards, or one in the
current directory with ".", "" or another relative entry on PATH, is never run."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from co_tui.sandbox.select import select_sandbox

pytestmark = pytest.mark.bwrap
REAL_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


@pytest.fixture
def fakes() -> Iterator[Path]:
    """A folder (reachable by the sandbox user) with fake `bwrap` and `setpriv` that note they
    ran in fakes/ran and fail; they are run as root or as the sandbox user."""
    folder = Path(tempfile.mkdtemp(prefix="co-fake-bin-", dir="/tmp"))
    folder.chmod(0o755)
    ran = folder / "ran"
    ran.write_text("")
    ran.chmod(0o666)
    for name in ("bwrap", "setpriv"):
        program = folder / name
        program.write_text(f'#!/bin/sh\necho "{name}" >> {ran}\nexit 1\n')
        program.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def fakes_that_ran(fakes: Path) -> list[str]:
    return (fakes / "ran").read_text().split()


async def test_a_fake_put_earlier_on_path_later_is_never_run(
    workspace: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch, bwrap_ready: None
) -> None:
    monkeypatch.setenv("PATH", REAL_PATH)
    choice = select_sandbox("bwrap", workspace, session_id="found-once-1")
    monkeypatch.setenv("PATH", f"{fakes}:{REAL_PATH}")
    for read_only in (False, True):
        result = await choice.sandbox.run_command("echo inside", read_only=read_only)
        assert (result.exit_code, result.output) == (0, "inside\n")
    assert fakes_that_ran(fakes) == []


@pytest.mark.parametrize("relative", [".", "", "bin"], ids=["dot", "empty", "relative-dir"])
async def test_a_fake_in_the_current_directory_is_never_run(
    relative: str,
    workspace: Path,
    fakes: Path,
    monkeypatch: pytest.MonkeyPatch,
    bwrap_ready: None,
) -> None:
    current = fakes.parent / f"{fakes.name}-cwd"
    (current / "bin").mkdir(parents=True)
    for name in ("bwrap", "setpriv"):
        for folder in (current, current / "bin"):
            shutil.copy2(fakes / name, folder / name)
    monkeypatch.chdir(current)
    monkeypatch.setenv("PATH", f"{relative}:{REAL_PATH}")
    try:
        choice = select_sandbox("bwrap", workspace, session_id="found-once-2")
        result = await choice.sandbox.run_command("echo inside")
    finally:
        shutil.rmtree(current, ignore_errors=True)
    assert (result.exit_code, result.output) == (0, "inside\n")
    assert fakes_that_ran(fakes) == []
    assert os.path.isabs(choice.sandbox.bwrap)  # type: ignore[attr-defined]
