"""Nothing lost, nothing run twice: real `co-tui` processes against the fake OpenAI server,
killed with SIGKILL at each phase of a turn, and two of them writing one session."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, ToolReturnPart

from co_tui.store.records import UNFINISHED_CALL
from co_tui.store.session_store import SessionStore
from co_tui.tui.screens.approval import ApprovalScreen
from co_tui.tui.widgets.items import Note
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.helpers import kill_processes_in, user_prompts, wait_for
from tests.servers.fake_openai import serve, stall_before_headers, text, tool_call
from tests.sessions.test_cli_sessions import CLI, db_path, env_for, run_cli, spawn_cli
from tests.sessions.test_resume_pilot import make_app
from tests.tui.helpers import SIZE, wait_until

MARKER_COMMAND = "echo ran >> marker.txt && sleep 20"


def cli_env(url: str) -> dict[str, str]:
    return {**env_for(url), "CO_TUI_SANDBOX_BACKEND": "subprocess"}


def tool_answers(messages: list[Any]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]


@pytest.mark.e2e
async def test_sigkill_while_an_approved_command_runs_never_runs_it_again(
    tmp_path: Path, isolated_env: Path
) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    marker = workspace / "marker.txt"
    script = [tool_call("run_shell_command", cmd=MARKER_COMMAND), text("What happened to it?")]
    with serve(script) as srv:
        env = cli_env(srv.url)
        proc = subprocess.Popen(
            [*CLI, "-p", "append to the marker", "--yes"],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            # `>>` creates the file before echo writes to it: wait for the line itself.
            wait_for(lambda: marker.is_file() and marker.read_text() == "ran\n", "the line")
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            proc.kill()
            kill_processes_in(workspace)
        db = db_path(isolated_env)
        sid = SessionStore(db).latest(str(workspace.resolve()))
        assert sid is not None and not sid.has_pending

        # The app reopens it: nothing is asked, the call is shown as interrupted.
        app = make_app(lambda *_: None, workspace, db, continue_latest=True)
        async with app.run_test(size=SIZE) as pilot:
            await app.wait_ready()
            await wait_until(
                pilot,
                lambda: any(isinstance(w, ToolCallBlock) for w in app.chat.transcript.items),
                "the restored tool call",
            )
            for _ in range(10):
                await pilot.pause()
            assert not isinstance(app.screen, ApprovalScreen)
            notes = [str(w._source) for w in app.chat.transcript.items if isinstance(w, Note)]
            assert any("may have run" in n and "none was run again" in n for n in notes), notes
            app.exit()

        # -p --continue with --yes: told it may have run; the model decides; no re-run.
        cont = spawn_cli(["-p", "did it run?", "--continue", "--yes"], workspace, env)
        sent = srv.requests[-1].body
    assert cont.returncode == 0, cont.stderr
    assert cont.stdout == "What happened to it?\n"
    assert "never reported back" in cont.stderr and MARKER_COMMAND in cont.stderr
    assert marker.read_text() == "ran\n"  # one line: it ran once
    tool_messages = [m["content"] for m in sent["messages"] if m["role"] == "tool"]
    assert tool_messages == [UNFINISHED_CALL]
    stored = SessionStore(db).load(sid.id)
    assert tool_answers(stored.messages) == [UNFINISHED_CALL]
    assert user_prompts(stored.messages) == ["append to the marker", "did it run?"]


@pytest.mark.e2e
def test_sigkill_in_every_phase_keeps_what_was_said(tmp_path: Path, isolated_env: Path) -> None:
    """Streaming, and an approved command running: each killed turn leaves a session that
    --continue opens, with every earlier turn and the killed turn's prompt."""
    slow = text("word " * 400, chunks=400, delay_s=0.02)
    script = [
        text("First."),
        slow,
        tool_call("run_shell_command", cmd=MARKER_COMMAND),
        text("Back."),
    ]
    with serve(script) as srv:
        env = cli_env(srv.url)
        assert run_cli(["-p", "one"], tmp_path, env).returncode == 0
        db = db_path(isolated_env)
        for prompt, started in (
            ("two", lambda: len(srv.requests) == 2),
            ("three", lambda: (tmp_path / "marker.txt").exists()),
        ):
            proc = subprocess.Popen(
                [*CLI, "-p", prompt, "--continue", "--yes"],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            try:
                wait_for(started, f"turn {prompt!r} under way")
                time.sleep(0.5)
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=30)
            finally:
                proc.kill()
                kill_processes_in(tmp_path)
        final = run_cli(["-p", "four", "--continue"], tmp_path, env)
    assert final.returncode == 0, final.stderr
    info = SessionStore(db).latest(str(tmp_path.resolve()))
    assert info is not None
    stored = SessionStore(db).load(info.id)
    assert user_prompts(stored.messages) == ["one", "two", "three", "four"]
    assert (tmp_path / "marker.txt").read_text() == "ran\n"


@pytest.mark.e2e
def test_two_continue_loops_on_one_session_lose_no_turn(tmp_path: Path, isolated_env: Path) -> None:
    turns_each = 5
    reply = text("noted " * 20, chunks=20, delay_s=0.02)  # turns overlap: ~0.4 s each
    with serve([text("Started.")], default=reply) as srv:
        env = cli_env(srv.url)
        assert run_cli(["-p", "start"], tmp_path, env).returncode == 0
        results: list[subprocess.CompletedProcess[str]] = []
        lock = threading.Lock()

        def loop(name: str) -> None:
            for n in range(turns_each):
                done = spawn_cli(["-p", f"{name} {n}", "--continue"], tmp_path, env)
                with lock:
                    results.append(done)

        threads = [threading.Thread(target=loop, args=(name,)) for name in ("alpha", "beta")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        listed = run_cli(["sessions", "--all"], tmp_path, env)  # -p runs: listed with --all
    assert [r.returncode for r in results] == [0] * (2 * turns_each), [r.stderr for r in results]
    store = SessionStore(db_path(isolated_env))
    infos = store.list(cwd=str(tmp_path.resolve()))
    said = {p for info in infos for p in user_prompts(store.load(info.id).messages)}
    expected = {"start"} | {f"{name} {n}" for name in ("alpha", "beta") for n in range(turns_each)}
    assert said == expected  # every turn is in some session
    forks = [info for info in infos if info.forked_from]
    conflicts = [r.stderr for r in results if "fork of" in r.stderr]
    assert len(forks) == len(conflicts)  # every fork was announced
    for fork in forks:
        assert f"fork of {fork.forked_from[:8]}" in listed.stdout  # type: ignore[index]


@pytest.mark.e2e
def test_the_writer_that_saves_second_forks_and_says_so(tmp_path: Path, isolated_env: Path) -> None:
    """A writer whose copy went stale mid-turn: the other process saved first."""
    slow = text("slow " * 50, chunks=50, delay_s=0.2)  # 10 s: the quick one starts well within
    with serve([text("Started."), slow, text("Quick.")]) as srv:
        env = cli_env(srv.url)
        assert run_cli(["-p", "start"], tmp_path, env).returncode == 0
        proc = subprocess.Popen(
            [*CLI, "-p", "slow one", "--continue", "--output-format", "stream-json"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: len(srv.requests) == 2, "the slow turn started")
        quick = run_cli(["-p", "quick one", "--continue"], tmp_path, env)
        out, _err = proc.communicate(timeout=60)
    assert quick.returncode == 0 and proc.returncode == 0
    events = [json.loads(line) for line in out.splitlines()]
    warnings = [e["message"] for e in events if e["type"] == "status" and e["level"] == "warning"]
    # Whichever saved second (which depends on when the slow one's first save landed) forks
    # and says so: in the slow one's stream-json or on the quick one's stderr.
    told = [w for w in [*warnings, quick.stderr] if "fork of" in w]
    assert len(told) == 1, (warnings, quick.stderr)
    store = SessionStore(db_path(isolated_env))
    infos = store.list(cwd=str(tmp_path.resolve()))
    assert len(infos) == 2
    prompts = {p for info in infos for p in user_prompts(store.load(info.id).messages)}
    assert prompts == {"start", "slow one", "quick one"}


class AppOnPty:
    """The full-screen app on a pseudo-terminal, as a user runs it."""

    def __init__(self, workspace: Path, env: dict[str, str], *args: str) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.proc = subprocess.Popen(
            [*CLI, *args],
            cwd=workspace,
            env={**env, "TERM": "xterm-256color"},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.screen = bytearray()

    def shows(self, text: bytes) -> bool:
        while select.select([self.master], [], [], 0)[0]:
            try:
                self.screen.extend(os.read(self.master, 65536))
            except OSError:
                break
        return text in self.screen

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        os.close(self.master)


@pytest.mark.e2e
def test_sigkill_with_the_approval_dialog_open_runs_nothing_and_asks_again(
    tmp_path: Path, isolated_env: Path
) -> None:
    script = [tool_call("run_shell_command", cmd=MARKER_COMMAND), text("Denied, fine.")]
    with serve(script) as srv:
        env = cli_env(srv.url)
        app = AppOnPty(tmp_path, env)
        try:
            wait_for(lambda: app.shows(b"subprocess"), "the app to load")
            app.type("append to the marker\r")
            wait_for(lambda: len(srv.requests) == 1 and app.shows(b"marker.txt"), "the dialog")
            time.sleep(0.5)
            app.kill()
        finally:
            app.proc.kill()
        info = SessionStore(db_path(isolated_env)).latest(str(tmp_path.resolve()))
        assert info is not None and info.has_pending  # still waiting for the decision
        # A front that does not ask answers it as never approved; nothing ran.
        cont = run_cli(["-p", "and now?", "--continue"], tmp_path, env)
        sent = srv.requests[-1].body
    assert cont.returncode == 0, cont.stderr
    assert not (tmp_path / "marker.txt").exists()
    tool_messages = [m["content"] for m in sent["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1 and "never given" in tool_messages[0]


@pytest.mark.e2e
def test_sigkill_during_compact_loses_nothing(tmp_path: Path, isolated_env: Path) -> None:
    hang = stall_before_headers(60, "too late")
    with serve([text("One."), text("Two."), hang]) as srv:
        env = cli_env(srv.url)
        assert run_cli(["-p", "first"], tmp_path, env).returncode == 0
        assert run_cli(["-p", "second", "--continue"], tmp_path, env).returncode == 0
        db = db_path(isolated_env)
        info = SessionStore(db).latest(str(tmp_path.resolve()))
        assert info is not None
        before = SessionStore(db).load(info.id).messages
        app = AppOnPty(tmp_path, env, "--continue")
        try:
            wait_for(lambda: app.shows(b"subprocess"), "the app to load")
            app.type("/compact\r")
            wait_for(lambda: len(srv.requests) == 3, "the summary request")
            app.kill()
        finally:
            app.proc.kill()
    after = SessionStore(db).load(info.id)
    assert after.messages == before and after.compactions == []
    assert user_prompts(after.messages) == ["first", "second"]
