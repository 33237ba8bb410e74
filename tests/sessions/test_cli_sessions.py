"""`co-tui -p` stores its turns: --continue, --resume, `co-tui sessions`, and a SIGKILL
in the middle of a streamed answer (subprocesses against the fake OpenAI server)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from co_tui.cli import with_bare_resume
from co_tui.store.session_store import SessionStore
from tests.cli_in_process import Ran, run_co_tui
from tests.servers.fake_openai import serve, text

CLI = [str(Path(sys.executable).parent / "co-tui")]


def env_for(url: str) -> dict[str, str]:
    return {**os.environ, "LLM_PROVIDER": "ollama", "OLLAMA_HOST": url, "OLLAMA_MODEL": "fake"}


def run_cli(args: list[str], cwd: Path, env: dict[str, str]) -> Ran:
    """`co-tui ARGS` in this process (tests/cli_in_process.py)."""
    return run_co_tui(args, cwd, env)


def spawn_cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`co-tui ARGS` as a process of its own: for runs that overlap or get killed."""
    return subprocess.run(
        [*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def contents(body: dict) -> list[str]:
    return [str(m.get("content")) for m in body["messages"] if m["role"] in ("user", "assistant")]


def db_path(isolated_env: Path) -> Path:
    return isolated_env / "data" / "co-tui" / "sessions.db"


@pytest.mark.e2e
def test_continue_and_resume_carry_the_conversation(tmp_path: Path, isolated_env: Path) -> None:
    with serve([text("Nice to meet you, Ada."), text("You are Ada."), text("Still Ada.")]) as srv:
        env = env_for(srv.url)
        first = run_cli(["-p", "My name is Ada", "--output-format", "json"], tmp_path, env)
        assert first.returncode == 0, first.stderr
        sid = json.loads(first.stdout)["session_id"]
        second = run_cli(["-p", "What is my name?", "--continue"], tmp_path, env)
        assert second.returncode == 0, second.stderr
        third = run_cli(["-p", "And now?", "--resume", sid[:8]], tmp_path, env)
        assert third.returncode == 0, third.stderr
        bodies = [r.body for r in srv.requests]
    assert contents(bodies[1]) == ["My name is Ada", "Nice to meet you, Ada.", "What is my name?"]
    assert contents(bodies[2])[-2:] == ["You are Ada.", "And now?"]
    listed = run_cli(["sessions"], tmp_path, env)  # -p runs are kept out of the list
    assert sid[:8] not in listed.stdout and listed.stdout.startswith("no sessions")
    listed = run_cli(["sessions", "--all"], tmp_path, env)
    assert listed.stdout.startswith(sid[:8])
    assert "3 turns  My name is Ada (-p)" in listed.stdout
    info = SessionStore(db_path(isolated_env)).info(sid)
    assert info.cwd == str(tmp_path.resolve()) and info.message_count == 6


@pytest.mark.slow
def test_continue_with_nothing_to_continue_says_so(tmp_path: Path) -> None:
    proc = run_cli(["-p", "hi", "--continue", "-m", "test"], tmp_path, dict(os.environ))
    assert proc.returncode == 1 and "no earlier session in" in proc.stderr


def test_bare_resume_means_choose() -> None:
    assert with_bare_resume(["--resume"]) == ["--resume", ""]
    assert with_bare_resume(["--resume", "-m", "x"]) == ["--resume", "", "-m", "x"]
    assert with_bare_resume(["--resume", "abc"]) == ["--resume", "abc"]


@pytest.mark.e2e
def test_sigkill_mid_stream_keeps_every_completed_turn(tmp_path: Path, isolated_env: Path) -> None:
    slow = text("word " * 400, chunks=400, delay_s=0.02)  # about 8 s of streaming
    with serve([text("Answer one."), text("Answer two."), slow, text("Answer four.")]) as srv:
        env = env_for(srv.url)
        assert run_cli(["-p", "turn one"], tmp_path, env).returncode == 0
        assert run_cli(["-p", "turn two", "--continue"], tmp_path, env).returncode == 0
        proc = subprocess.Popen(
            [*CLI, "-p", "turn three", "--continue"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None
        assert proc.stdout.read(20)  # the answer is streaming
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL

        path = db_path(isolated_env)
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        (info,) = SessionStore(path).list()
        loaded = SessionStore(path).load(info.id)
        texts = [str(getattr(p, "content", "")) for m in loaded.messages for p in m.parts]
        assert texts[:5] == ["turn one", "Answer one.", "turn two", "Answer two.", "turn three"]
        assert info.turns == 3  # the killed turn's prompt was saved before it streamed

        # The session goes on after the crash.
        time.sleep(0.1)
        fourth = run_cli(["-p", "turn four", "--continue"], tmp_path, env)
        assert fourth.returncode == 0, fourth.stderr
        assert fourth.stdout.strip() == "Answer four."
        last = contents(srv.requests[-1].body)
        assert last[:4] == ["turn one", "Answer one.", "turn two", "Answer two."]
        assert "turn three" in last[-1] or "turn three" in last
