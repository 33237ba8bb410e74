"""`co-tui daemon` as a process of its own, with a job due in seconds and a local
OpenAI-compatible server as its model: what the job's model asks to do is filed in the
inbox once and never run; a daemon killed with -9 mid-run does not run that job again; a
second daemon refuses; idle, it costs nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from co_tui.store.jobs_store import JobStore
from tests.helpers import wait_for
from tests.jobs.helpers import job_model_env
from tests.servers.fake_openai import serve, stall_before_headers, text, tool_call

pytestmark = pytest.mark.e2e

CLI = str(Path(sys.executable).parent / "co-tui")


def model_env(url: str) -> dict[str, str]:
    return {**os.environ, **job_model_env(url), "CO_TUI_SANDBOX_BACKEND": "subprocess"}


def co_tui(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def daemon(cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [CLI, "daemon"], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb")
    )


def jobs() -> JobStore:
    data = Path(os.environ["XDG_DATA_HOME"]) / "co-tui" / "jobs.db"
    return JobStore(data)


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_a_job_files_what_it_would_do_and_nothing_runs(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [
        tool_call("run_shell_command", cmd="touch made-by-the-job"),
        text("I proposed a command; it waits for you in the inbox."),
    ]
    with serve(script) as srv:
        env = model_env(srv.url)
        added = co_tui(["jobs", "add", "in 2 seconds", "make a file here"], workspace, env)
        assert added.returncode == 0, added.stderr
        log = tmp_path / "daemon.log"
        proc = daemon(tmp_path, env, log)
        try:
            store = jobs()
            wait_for(lambda: [r.state for r in store.runs()] == ["done"], "the run", proc)
            second = co_tui(["daemon"], tmp_path, env)
            assert second.returncode == 1 and "already runs the jobs" in second.stderr

            (proposal,) = store.proposals()
            assert proposal.tool_name == "run_shell_command"
            assert proposal.args["cmd"] == "touch made-by-the-job"
            assert not (workspace / "made-by-the-job").exists()
            inbox = co_tui(["inbox"], workspace, env)
            assert "run_shell_command" in inbox.stdout and "touch made-by-the-job" in inbox.stdout
            # The model was told, and answered: the run is an ordinary stored session.
            (run,) = store.runs()
            assert run.session_id and "1 call(s) held for approval" in run.detail
            sessions = co_tui(["sessions"], workspace, env)
            assert run.session_id[:8] in sessions.stdout
            assert len(srv.requests) == 2

            before = cpu_ticks(proc.pid)
            time.sleep(5)
            assert cpu_ticks(proc.pid) - before <= 1  # idle: 0.00 s of CPU per 5 s
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0
        assert "stopped" in log.read_text()
        assert len(store.proposals()) == 1  # nothing filed twice, nothing run again


def test_a_daemon_killed_mid_run_never_runs_that_slot_again(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with serve([stall_before_headers(30)], default=text("late")) as srv:
        env = model_env(srv.url)
        assert co_tui(["jobs", "add", "in 1 second", "say hi"], workspace, env).returncode == 0
        proc = daemon(tmp_path, env, tmp_path / "first.log")
        store = jobs()
        try:
            wait_for(lambda: len(srv.requests) == 1, "the run's request", proc)
        finally:
            proc.kill()
            proc.wait(10)
        assert [r.state for r in store.runs()] == ["running"]

        log = tmp_path / "second.log"
        again = daemon(tmp_path, env, log)
        try:
            wait_for(lambda: "cut short" in log.read_text(), "the restart's notice", again)
            (run,) = store.runs()
            assert run.state == "interrupted"
            time.sleep(2)  # a re-run would have asked the model again by now
            assert len(srv.requests) == 1
        finally:
            again.send_signal(signal.SIGTERM)
            assert again.wait(30) == 0
