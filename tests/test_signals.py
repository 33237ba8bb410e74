"""SIGTERM and SIGHUP stop co-tui the way Ctrl+C stops a turn: the running command is killed
(nothing it started outlives co-tui), the turn is saved with what it had, and co-tui exits
with 128 + the signal's number. Real `co-tui` processes against the fake OpenAI server, in
print mode and in the full-screen app on a pseudo-terminal that is hung up."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import select
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.safety.signals import cancelled_by_stop_signals
from co_tui.store.session_store import SessionStore
from tests.helpers import processes_in, wait_for
from tests.servers.fake_openai import serve, text, tool_call

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

CLI = [str(Path(sys.executable).parent / "co-tui")]
# Writes started.txt first (then the test knows it runs), would write marker.txt at the end.
SLOW_COMMAND = "echo started > started.txt; sleep 30; echo late > marker.txt"
STOPS = [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGHUP, id="SIGHUP")]


def env_for(url: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "LLM_PROVIDER": "openai",
        "OPENAI_BASE_URL": f"{url}/v1",
        "OPENAI_API_KEY": "sk-test-not-a-secret",
        "CO_TUI_OPENAI_MODEL": "fake",
        "CO_TUI_SANDBOX_BACKEND": "subprocess",
        **extra,
    }


def stored_messages(isolated_env: Path) -> list[ModelMessage]:
    store = SessionStore(isolated_env / "data" / "co-tui" / "sessions.db")
    try:
        (info,) = store.list()
        return store.load(info.id).messages
    finally:
        store.close()


def assert_saved_with_the_call_interrupted(isolated_env: Path) -> None:
    messages = stored_messages(isolated_env)
    parts = [p for m in messages for p in m.parts]
    prompts = [p.content for p in parts if isinstance(p, UserPromptPart)]
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    returns = [p for p in parts if isinstance(p, ToolReturnPart)]
    assert prompts == ["run it"]
    assert [c.args_as_dict() for c in calls] == [{"cmd": SLOW_COMMAND}]
    assert [r.tool_call_id for r in returns] == [calls[0].tool_call_id]  # answered: resumable
    assert "marker" not in str(returns[0].content)
    assert returns[0].outcome == "interrupted"  # stored (and drawn) as cut short, not as done
    with sqlite3.connect(isolated_env / "data" / "co-tui" / "sessions.db") as db:
        journal = db.execute("SELECT state FROM tool_runs").fetchall()
    db.close()
    assert journal == [("interrupted",)]  # closed: never reported as still running


def assert_nothing_left(workspace: Path) -> None:
    assert processes_in(workspace) == []
    assert not (workspace / "marker.txt").exists()


@pytest.mark.e2e
@pytest.mark.parametrize("signum", STOPS)
def test_print_mode_kills_the_command_saves_the_turn_and_exits_128_plus_n(
    tmp_path: Path, isolated_env: Path, signum: int
) -> None:
    with serve([tool_call("run_shell_command", cmd=SLOW_COMMAND), text("Never said.")]) as srv:
        proc = subprocess.Popen(
            [*CLI, "-p", "run it", "--yes"],
            cwd=tmp_path,
            env=env_for(srv.url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            wait_for((tmp_path / "started.txt").exists, "the command to start", proc)
            running = processes_in(tmp_path)
            assert any(cmd.startswith("sleep 30") for cmd in running), running
            os.kill(proc.pid, signum)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 128 + signum, err.decode()
    assert f"co-tui: stopped by {signal.Signals(signum).name}" in err.decode()
    assert out == b""  # no answer: the turn never finished
    assert_nothing_left(tmp_path)
    assert_saved_with_the_call_interrupted(isolated_env)
    assert len(srv.requests) == 1  # the model was not asked again after the signal
    listed = subprocess.run(
        [*CLI, "sessions", "--all"],
        cwd=tmp_path,
        env=env_for(srv.url),
        capture_output=True,
        text=True,
    )
    assert "1 turns  run it" in listed.stdout  # a -p run: listed with --all


@pytest.mark.e2e
def test_sigterm_mid_stream_keeps_the_partial_answer(tmp_path: Path, isolated_env: Path) -> None:
    slow = text("word " * 400, chunks=400, delay_s=0.02)  # about 8 s of streaming
    with serve([slow]) as srv:
        proc = subprocess.Popen(
            [*CLI, "-p", "talk", "--output-format", "stream-json"],
            cwd=tmp_path,
            env=env_for(srv.url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert proc.stdout is not None
            lines: list[bytes] = []
            while sum(b'"text_delta"' in line for line in lines) < 5:
                line = proc.stdout.readline()
                assert line, f"co-tui ended before streaming: {proc.communicate()[1].decode()}"
                lines.append(line)
            os.kill(proc.pid, signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 143, err.decode()
    events = [json.loads(line) for line in [*lines, *out.splitlines()]]
    assert [e["type"] for e in events[-2:]] == ["interrupted", "turn_end"]
    streamed = "".join(e["content"] for e in events if e["type"] == "text_delta")
    assert streamed.startswith("word word word ") and len(streamed) < len("word " * 400)

    messages = stored_messages(isolated_env)
    last = messages[-1]
    assert isinstance(last, ModelResponse) and last.state == "interrupted"
    assert [p.content for p in last.parts if isinstance(p, TextPart)] == [streamed]


@pytest.mark.e2e
def test_closing_the_terminal_stops_the_app_like_ctrl_c(tmp_path: Path, isolated_env: Path) -> None:
    """The full-screen app on a pseudo-terminal; closing its master end hangs the terminal
    up: the kernel sends SIGHUP, as when the user closes the terminal window."""
    script = [tool_call("run_shell_command", cmd=SLOW_COMMAND), text("Never said.")]
    with serve(script) as srv:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        env = env_for(srv.url, CO_TUI_AUTO_CONFIRM="true", TERM="xterm-256color")
        proc = subprocess.Popen(
            CLI,
            cwd=tmp_path,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),  # its controlling tty
        )
        os.close(slave)
        screen = bytearray()

        def drain() -> None:  # the app blocks once the terminal's buffer is full
            while select.select([master], [], [], 0)[0]:
                try:
                    screen.extend(os.read(master, 65536))
                except OSError:
                    return

        def loaded() -> bool:
            drain()
            return b"subprocess" in screen  # the sandbox's name in the status bar

        def started() -> bool:
            drain()
            return (tmp_path / "started.txt").exists()

        try:
            wait_for(loaded, "the app to load", proc)
            os.write(master, b"run it\r")
            wait_for(started, "the command to start", proc)
            assert any(cmd.startswith("sleep 30") for cmd in processes_in(tmp_path))
            os.close(master)
            master = -1
            code = proc.wait(timeout=60)
        finally:
            proc.kill()
            if master != -1:
                os.close(master)
    assert code == 128 + signal.SIGHUP
    assert_nothing_left(tmp_path)
    assert_saved_with_the_call_interrupted(isolated_env)


def send_to_self(signum: int) -> None:
    """Deliver `signum` to this process once it is handled (else it would end pytest)."""
    assert signal.getsignal(signum) not in (signal.SIG_DFL, signal.SIG_IGN, None)
    os.kill(os.getpid(), signum)


async def test_the_signal_ends_what_runs_in_the_block_and_names_its_exit_code() -> None:
    async with cancelled_by_stop_signals() as stop:
        send_to_self(signal.SIGTERM)
        await asyncio.sleep(60)
        raise AssertionError("the signal did not cancel the block")
    assert stop.exit_code == 143 and stop.name == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # handed back on the way out
    await asyncio.sleep(0)  # the task goes on: the cancellation ended in the block


async def test_disarmed_a_signal_is_only_remembered() -> None:
    async with cancelled_by_stop_signals() as stop:
        stop.disarm()  # clean-up that must finish
        send_to_self(signal.SIGHUP)
        for _ in range(500):  # the loop runs the handler between steps
            if stop.signum is not None:
                break
            await asyncio.sleep(0.01)
    assert stop.exit_code == 129


async def test_a_cancellation_the_signal_did_not_cause_goes_on() -> None:
    task = asyncio.current_task()
    assert task is not None
    with pytest.raises(asyncio.CancelledError):
        async with cancelled_by_stop_signals():
            asyncio.get_running_loop().call_soon(task.cancel)
            await asyncio.sleep(60)
    task.uncancel()
