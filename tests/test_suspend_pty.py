"""The real `co-tui` on a pseudo-terminal, Ctrl+Z: started from an interactive shell it stops
(the shell gets the terminal back) and `fg` brings it back redrawn with the draft as it was;
started with no shell to come back to, it says so and keeps running."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tests.servers.fake_openai import serve, text
from tests.test_peers_pty import Terminal, co_tui, on_a_pty
from tests.test_signals import CLI, env_for

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="/proc and a Linux pty"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="an interactive shell: bash"),
]

DRAFT = "half-typed thought about alpacas"
CTRL_Z = b"\x1a"


def state_of(pid: int) -> str:
    """The process's state letter in /proc (T: stopped)."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    return stat.rsplit(")", 1)[1].split()[0]


def child_of(term: Terminal) -> int | None:
    """The shell's one child: the co-tui it runs as a job."""
    pid = term.proc.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="ascii").split()
    return int(children[0]) if children else None


@pytest.mark.e2e
def test_ctrl_z_stops_co_tui_and_fg_brings_it_back_with_the_draft(
    tmp_path: Path, isolated_env: Path
) -> None:
    shell = ["bash", "--norc", "--noprofile", "-i"]
    with serve([text("alpacas noted")]) as srv:
        env = {**env_for(srv.url), "PS1": "shell$ "}
        with on_a_pty(shell, tmp_path, env) as term:
            term.shows(b"shell$ ", "the shell's prompt")
            term.type(shlex.join(CLI).encode() + b"\r")
            term.shows(b"subprocess", "the app to load")
            app = child_of(term)
            assert app is not None
            term.type(DRAFT.encode())
            term.shows(DRAFT.encode(), "the draft in the prompt")

            term.type(CTRL_Z)
            wait_for(lambda: state_of(app) == "T", "co-tui stopped (state T)", term.proc)
            term.shows(b"Stopped", "the shell reporting the stopped job")
            term.drain()
            term.screen.clear()

            term.type(b"fg\r")
            wait_for(lambda: state_of(app) != "T", "co-tui running again", term.proc)
            term.shows(b"subprocess", "the app redrawn (its status bar)")
            term.shows(DRAFT.encode(), "the draft redrawn in the prompt")
            term.type(b"\r")
            term.shows(b"alpacas noted", "the answer to the draft, sent after fg")
            assert state_of(app) != "T"


@pytest.mark.e2e
def test_ctrl_z_with_no_shell_to_come_back_to_does_nothing_harmful(
    tmp_path: Path, isolated_env: Path
) -> None:
    # co_tui() starts it as the leader of its own session: no job control, no `fg`.
    with co_tui(tmp_path, env_for("http://127.0.0.1:9")) as term:
        term.type(DRAFT.encode())
        term.shows(DRAFT.encode(), "the draft in the prompt")
        term.type(CTRL_Z)
        term.shows(b"no shell with job control", "the note saying why it did not suspend")
        assert state_of(term.proc.pid) != "T"
        term.type(b" still here")
        term.shows(b"still here", "the prompt still taking keys")
