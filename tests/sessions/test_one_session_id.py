"""One id names a session everywhere: its row in sessions.db, `deps.session_id`, the
`co.session_id` of its spans and (with Docker) the sandbox container's name and label.

The app and `-p` are started the way a user starts them: no bundle or deps handed in, the
model a fake OpenAI-compatible server on 127.0.0.1, telemetry on.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.config.settings import Settings
from co_tui.store.session_store import SessionStore
from co_tui.telemetry import default_db_path, shutdown_telemetry
from co_tui.tui.app import CoApp
from tests.cli_in_process import Ran, run_co_tui
from tests.helpers import engine_unavailable
from tests.sandbox.conftest import IMAGE, make_workspace
from tests.servers.fake_openai import serve, text, tool_call
from tests.telemetry.test_viewer import until
from tests.tui.helpers import SIZE, settle

CLI = [str(Path(sys.executable).parent / "co-tui")]

pytestmark = pytest.mark.usefixtures("allow_model_requests")


@pytest.fixture(autouse=True)
def telemetry_closed() -> Iterator[None]:
    yield
    shutdown_telemetry()


@pytest.fixture
def workspace() -> Iterator[Path]:
    """Outside pytest's 0700 tree and owned by another uid under root, as the sandbox needs."""
    path = make_workspace()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def sessions_db(isolated_env: Path) -> Path:
    return isolated_env / "data" / "co-tui" / "sessions.db"


def stored_ids(isolated_env: Path) -> set[str]:
    return {info.id for info in SessionStore(sessions_db(isolated_env)).list()}


def turn_span_session_ids() -> list[str]:
    """The `co.session_id` of every `turn` span, oldest first (telemetry shut down first, as
    on exit, so every span is written)."""
    shutdown_telemetry()
    conn = sqlite3.connect(default_db_path())
    try:
        rows = conn.execute(
            "SELECT attributes FROM spans WHERE name = 'turn' ORDER BY start_time"
        ).fetchall()
    finally:
        conn.close()
    return [json.loads(attributes)["co.session_id"] for (attributes,) in rows]


def provider_settings(url: str, **kw: Any) -> Settings:
    return Settings(
        llm_provider="ollama",
        ollama_host=url,
        ollama_model="fake",
        theme="textual-dark",
        **kw,
    )


@pytest.mark.e2e
async def test_the_app_saves_traces_and_runs_under_the_deps_id(
    tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    script = [
        tool_call("run_shell_command", cmd="echo one"),
        text("Ran it."),
        text("A fresh start."),
    ]
    with serve(script) as srv:
        settings = provider_settings(srv.url, sandbox_backend="subprocess", auto_confirm=True)
        app = CoApp(settings, history_path=None)
        async with app.run_test(size=SIZE) as pilot:
            assert await app.wait_ready()
            app.start_turn("run echo one")
            await settle(pilot, app)
            first = app.session.session_id
            assert app.session.built()[1].session_id == first
            app.run_command("/clear")
            await until(pilot, lambda: app.session.session_id != first)
            app.start_turn("hello again")
            await settle(pilot, app)
            second = app.session.session_id
            assert app.session.built()[1].session_id == second
            assert app.session.last_answer == "A fresh start."
    assert stored_ids(isolated_env) == {first, second}
    assert turn_span_session_ids() == [first, second]


def run_cli(args: list[str], cwd: Path, url: str) -> Ran:
    """`co-tui ARGS` in this process (tests/cli_in_process.py)."""
    env = {**os.environ, "LLM_PROVIDER": "ollama", "OLLAMA_HOST": url, "OLLAMA_MODEL": "fake"}
    return run_co_tui(args, cwd, env)


@pytest.mark.e2e
def test_print_mode_saves_and_traces_under_the_id_it_reports(
    tmp_path: Path, isolated_env: Path
) -> None:
    with serve([text("First."), text("Second.")]) as srv:
        first = run_cli(["-p", "hello", "--output-format", "json"], tmp_path, srv.url)
        assert first.returncode == 0, first.stderr
        again = run_cli(["-p", "more", "--continue", "--output-format", "json"], tmp_path, srv.url)
        assert again.returncode == 0, again.stderr
    session_id = json.loads(first.stdout)["session_id"]
    assert json.loads(again.stdout)["session_id"] == session_id
    assert stored_ids(isolated_env) == {session_id}
    assert turn_span_session_ids() == [session_id, session_id]


@pytest.mark.e2e
@pytest.mark.docker
async def test_the_sandbox_container_is_named_and_labelled_after_the_session(
    isolated_env: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from docker.errors import NotFound

    from co_tui.sandbox.docker import CONTAINER_PREFIX, LABEL_SESSION
    from co_tui.sandbox.select import probe_docker

    client, why = probe_docker(IMAGE)
    if client is None:
        engine_unavailable(why or "Docker unavailable")

    def container_of(session_id: str) -> Any:
        return client.containers.get(f"{CONTAINER_PREFIX}{session_id[:8]}")

    monkeypatch.chdir(workspace)
    script = [
        tool_call("run_shell_command", cmd="touch made-here"),
        text("Done."),
        tool_call("run_shell_command", cmd="touch made-later"),
        text("Done again."),
    ]
    with serve(script) as srv:
        settings = provider_settings(
            srv.url, sandbox_backend="docker", docker_image=IMAGE, auto_confirm=True
        )
        app = CoApp(settings, history_path=None)
        try:
            async with app.run_test(size=SIZE) as pilot:
                assert await app.wait_ready()
                app.start_turn("make a file")
                await settle(pilot, app)
                first = app.session.session_id
                assert container_of(first).labels[LABEL_SESSION] == first
                app.run_command("/clear")
                await until(pilot, lambda: app.session.session_id != first)
                # The prompt takes input once /clear is over: the new id comes first, the
                # container is renamed after (slow when the machine is busy).
                await settle(pilot, app)
                app.start_turn("make another")
                await settle(pilot, app)
                second = app.session.session_id
                assert container_of(second).labels[LABEL_SESSION] == second
                with pytest.raises(NotFound):
                    container_of(first)
        finally:
            await app.session.aclose()
    client.close()
    assert (workspace / "made-here").exists() and (workspace / "made-later").exists()
    assert stored_ids(isolated_env) == {first, second}
    assert turn_span_session_ids() == [first, second]


@pytest.mark.e2e
@pytest.mark.docker
def test_print_mode_runs_its_commands_in_the_container_of_its_session(
    isolated_env: Path, workspace: Path
) -> None:
    from co_tui.sandbox.docker import CONTAINER_PREFIX, LABEL_SESSION
    from co_tui.sandbox.select import probe_docker

    client, why = probe_docker(IMAGE)
    if client is None:
        engine_unavailable(why or "Docker unavailable")
    seen: dict[str, str] = {}  # container name -> its session label
    script = [tool_call("run_shell_command", cmd="sleep 2; touch made-here"), text("Done.")]
    with serve(script) as srv:
        env = {
            **os.environ,
            "LLM_PROVIDER": "ollama",
            "OLLAMA_HOST": srv.url,
            "OLLAMA_MODEL": "fake",
            "CO_TUI_SANDBOX_BACKEND": "docker",
            "CO_TUI_DOCKER_IMAGE": IMAGE,
        }
        proc = subprocess.Popen(
            [*CLI, "-p", "make a file", "--yes", "--output-format", "json"],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        while proc.poll() is None and not seen:  # the container lives while co-tui does
            for container in client.containers.list(filters={"label": LABEL_SESSION}):
                if container.labels.get("co-tui.pid") == str(proc.pid):
                    seen[container.name] = container.labels[LABEL_SESSION]
            time.sleep(0.1)
        out, err = proc.communicate(timeout=120)
    client.close()
    assert proc.returncode == 0, err
    session_id = json.loads(out)["session_id"]
    assert seen == {f"{CONTAINER_PREFIX}{session_id[:8]}": session_id}
    assert (workspace / "made-here").exists()
    assert stored_ids(isolated_env) == {session_id}
    assert turn_span_session_ids() == [session_id]
