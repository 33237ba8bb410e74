"""The CLI with a sandbox that does not work: `co-tui -p` refuses to start (exit 2, one line
naming why), `co-tui status` shows the error or the no-isolation warning."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.conftest import make_workspace
from tests.test_headless import run_cli

NO_ENGINE = "unix:///nonexistent/docker.sock"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    path = make_workspace()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("backend", "why"),
    [
        ("docker", f"no Docker engine answers at {NO_ENGINE}"),
        ("bwrap", "bwrap not installed"),
    ],
)
def test_print_mode_with_a_configured_backend_that_does_not_work_exits_2(
    project: Path, tmp_path: Path, backend: str, why: str
) -> None:
    proc = run_cli(
        ["-p", "run ls", "--model", "test"],
        project,
        CO_TUI_SANDBOX_BACKEND=backend,
        DOCKER_HOST=NO_ENGINE,
        PATH=str(tmp_path),  # no bwrap
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f'co-tui: sandbox_backend is "{backend}" but it does not work here')
    assert why in line


@pytest.mark.slow
def test_status_shows_the_warning_when_nothing_isolates(project: Path, tmp_path: Path) -> None:
    proc = run_cli(["status"], project, DOCKER_HOST=NO_ENGINE, PATH=str(tmp_path), COLUMNS="500")
    assert proc.returncode == 0, proc.stderr
    assert "subprocess (isolation: none; fallback: no isolating backend works here)" in proc.stdout
    assert "warning" in proc.stdout
    assert "no sandbox: commands run on this machine unisolated (docker: no Docker" in proc.stdout


@pytest.mark.slow
def test_status_shows_a_configured_backend_that_does_not_work(project: Path) -> None:
    proc = run_cli(
        ["status"], project, CO_TUI_SANDBOX_BACKEND="docker", DOCKER_HOST=NO_ENGINE, COLUMNS="500"
    )
    assert proc.returncode == 0, proc.stderr
    assert 'unavailable: sandbox_backend is "docker" but it does not work here' in proc.stdout
