"""The real `co-tui` on a pseudo-terminal, against the fake OpenAI server: the notification
escape sequences reach the terminal when it reports the focus gone, and Ctrl+G hands the
terminal to $EDITOR and takes what it saved."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tests.servers.fake_openai import Reply, serve, text
from tests.test_signals import CLI, env_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")

FOCUS_OUT = b"\x1b[O"  # what a terminal with focus reporting on sends when it loses focus


@dataclass
class Terminal:
    proc: subprocess.Popen[bytes]
    master: int
    screen: bytearray = field(default_factory=bytearray)

    def drain(self) -> bytes:
        while select.select([self.master], [], [], 0)[0]:
            try:
                self.screen.extend(os.read(self.master, 65536))
            except OSError:
                break
        return bytes(self.screen)

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    def ended(self) -> bool:
        """Whether the program exited (what it wrote read meanwhile: a full pty blocks it)."""
        self.drain()
        return self.proc.poll() is not None

    def shows(self, needle: bytes, what: str) -> None:
        wait_for(lambda: needle in self.drain(), what, self.proc)


@contextmanager
def on_a_pty(argv: list[str], cwd: Path, env: dict[str, str]) -> Iterator[Terminal]:
    """`argv` started on a 100x30 pseudo-terminal (its controlling terminal), killed after."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**env, "TERM": "xterm-256color"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
    )
    os.close(slave)
    try:
        yield Terminal(proc, master)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        os.close(master)


@contextmanager
def co_tui(cwd: Path, env: dict[str, str]) -> Iterator[Terminal]:
    with on_a_pty(CLI, cwd, env) as terminal:
        terminal.shows(b"subprocess", "the app to load")  # the sandbox in the status bar
        yield terminal


@pytest.mark.e2e
def test_an_approval_waiting_unfocused_reaches_the_terminal(
    tmp_path: Path, isolated_env: Path
) -> None:
    # The tool call comes after a pause: time for the focus to go after "run it" was typed
    # (a key press gives the focus back).
    late_call = Reply(
        "tool", tool_name="run_shell_command", tool_args={"cmd": "echo hi"}, stall_before_s=1.5
    )
    with serve([late_call, text("done")]) as srv, co_tui(tmp_path, env_for(srv.url)) as term:
        term.type(b"run it\r")
        term.type(FOCUS_OUT)
        term.shows(b"\x1b]777;notify;co-tui;run_shell_command waits", "the OSC 777 notification")
        screen = term.drain()
        assert b"\x1b]9;co-tui: run_shell_command waits for your decision: echo hi\x07" in screen


@pytest.mark.e2e
def test_ctrl_g_hands_the_terminal_to_the_editor(tmp_path: Path, isolated_env: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\necho "EDITOR-RAN"\nprintf "from the editor\\n" >> "$1"\n')
    editor.chmod(0o755)
    env = env_for("http://127.0.0.1:9", EDITOR=str(editor))
    env.pop("VISUAL", None)
    with co_tui(tmp_path, env) as term:
        term.type(b"draft")
        term.shows(b"draft", "the draft")
        term.type(b"\x07")  # Ctrl+G
        term.shows(b"EDITOR-RAN", "the editor's own output on the terminal")
        term.shows(b"from the editor", "the edited text back in the prompt")
