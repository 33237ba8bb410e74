"""Ctrl+G on a real pseudo-terminal with editors that take their time, fail or are killed:
the app comes back every time, and the draft is never lost. What the prompt holds is read
from what the fake provider receives when the prompt is sent."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tests.servers.fake_openai import serve, text
from tests.test_peers_pty import Terminal, co_tui
from tests.test_signals import env_for

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal"),
]

CTRL_G = b"\x07"
# The end of the notice "the editor <path> exited ...; the draft is unchanged". The notice wraps
# in a narrow toast, where depends on the path's length (longer under pytest-xdist), so only
# its last word is looked for on the raw screen.
DRAFT_KEPT = b"unchanged"


def editor(tmp_path: Path, body: str) -> dict[str, str]:
    """An $EDITOR running `body` (sh; "$1" is the draft's file)."""
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    env = env_for("http://127.0.0.1:9", EDITOR=str(script))
    env.pop("VISUAL", None)
    return env


def sent_prompts(srv: object) -> list[str]:
    return [
        str(request.body["messages"][-1]["content"])
        for request in srv.requests  # type: ignore[attr-defined]
    ]


def send_and_read_back(term: Terminal, srv: object, count: int) -> str:
    """Send the prompt (Enter); the text the provider received as request `count`."""
    term.type(b"\r")
    wait_for(lambda: len(sent_prompts(srv)) >= count, "the prompt to reach the provider", term.proc)
    return sent_prompts(srv)[count - 1]


@pytest.mark.e2e
def test_a_slow_editor_three_times_then_a_hangup_ends_the_app(
    tmp_path: Path, isolated_env: Path
) -> None:
    # Each run waits 2 s (as a person in vim would), then writes the cycle's words.
    counter = tmp_path / "runs"
    env = editor(
        tmp_path,
        f'n=$(( $(cat {counter} 2>/dev/null || echo 0) + 1 )); echo "$n" > {counter}\n'
        'echo "EDITOR-RUN-$n"\nsleep 2\nprintf "slow edit number %s\\n" "$n" > "$1"',
    )
    drafts = tmp_path / "tmp"
    drafts.mkdir()
    env["TMPDIR"] = str(drafts)  # where the draft's file is made
    with serve([text("one"), text("two"), text("three")]) as srv:
        env["OPENAI_BASE_URL"] = f"{srv.url}/v1"
        with co_tui(tmp_path, env) as term:
            for cycle in (1, 2, 3):
                term.type(f"draft {cycle}".encode())
                term.shows(f"draft {cycle}".encode(), "the draft in the prompt")
                term.type(CTRL_G)
                term.shows(f"EDITOR-RUN-{cycle}".encode(), "the editor started")
                term.shows(f"slow edit number {cycle}".encode(), "the edited text in the prompt")
                assert send_and_read_back(term, srv, cycle) == f"slow edit number {cycle}"
                term.shows(b"one two three".split()[cycle - 1], "the answer")
            assert b"internal error" not in term.drain()
            assert list(drafts.glob("co-tui-prompt-*")) == []  # deleted once back in the prompt
            os.kill(term.proc.pid, signal.SIGHUP)
            wait_for(term.ended, "co-tui to end on SIGHUP")
            assert term.proc.returncode == 128 + signal.SIGHUP


@pytest.mark.e2e
@pytest.mark.parametrize(
    "body",
    [
        pytest.param('printf "half-written junk\\n" > "$1"\nexit 3', id="exits-non-zero"),
        pytest.param('printf "half-written junk\\n" > "$1"\nkill -9 $$', id="killed"),
    ],
)
def test_an_editor_that_fails_leaves_the_draft(
    tmp_path: Path, isolated_env: Path, body: str
) -> None:
    env = editor(tmp_path, f'echo "EDITOR-STARTED"\nsleep 1\n{body}')
    with serve([text("answered")]) as srv:
        env["OPENAI_BASE_URL"] = f"{srv.url}/v1"
        with co_tui(tmp_path, env) as term:
            term.type(b"my precious draft")
            term.shows(b"my precious draft", "the draft")
            term.type(CTRL_G)
            term.shows(b"EDITOR-STARTED", "the editor started")
            term.shows(DRAFT_KEPT, "the app back, saying why")
            assert send_and_read_back(term, srv, 1) == "my precious draft"
            term.shows(b"answered", "the answer")
            assert b"internal error" not in term.drain()


@pytest.mark.e2e
def test_ctrl_c_in_the_editor_ends_the_editor_not_the_app(
    tmp_path: Path, isolated_env: Path
) -> None:
    """The terminal is the editor's while it runs: Ctrl+C there signals the editor's process
    group, which co-tui shares. It stops the editor; co-tui comes back with the draft."""
    env = editor(tmp_path, 'echo "EDITOR-WAITING"\nsleep 30\nprintf "late\\n" > "$1"')
    with serve([text("answered")]) as srv:
        env["OPENAI_BASE_URL"] = f"{srv.url}/v1"
        with co_tui(tmp_path, env) as term:
            term.type(b"keep me")
            term.shows(b"keep me", "the draft")
            term.type(CTRL_G)
            term.shows(b"EDITOR-WAITING", "the editor running")
            term.type(b"\x03")  # Ctrl+C, as the editor's terminal sees it (cooked: SIGINT)
            term.shows(DRAFT_KEPT, "the app back, saying why")
            assert send_and_read_back(term, srv, 1) == "keep me"
            assert b"internal error" not in term.drain()


@pytest.mark.e2e
def test_stopped_and_continued_from_outside_the_app_comes_back(
    tmp_path: Path, isolated_env: Path
) -> None:
    """SIGTSTP (a job-control stop) suspends the app as Ctrl+G does; SIGCONT resumes it."""
    with serve([text("one"), text("two")]) as srv, co_tui(tmp_path, env_for(srv.url)) as term:
        for cycle in (1, 2):
            os.kill(term.proc.pid, signal.SIGTSTP)
            wait_for(lambda: _stopped(term), "co-tui to stop", term.proc)
            redrawn = _redrawn_after(term, lambda: os.kill(term.proc.pid, signal.SIGCONT))
            # Keys typed before the app takes the terminal back would meet a cooked one.
            wait_for(redrawn, "the app redrawn", term.proc)
            term.type(f"after stop {cycle}".encode())
            assert send_and_read_back(term, srv, cycle) == f"after stop {cycle}"
        os.kill(term.proc.pid, signal.SIGHUP)
        wait_for(term.ended, "co-tui to end on SIGHUP")
        assert term.proc.returncode == 128 + signal.SIGHUP


def _redrawn_after(term: Terminal, action: Callable[[], None]) -> Callable[[], bool]:
    """Do `action`; a condition: the prompt was drawn again since."""
    mark = len(term.drain())
    action()
    return lambda: b"Ask anything" in term.drain()[mark:]


def _stopped(term: Terminal) -> bool:
    """Whether co-tui is stopped (state T in /proc). What it wrote is read meanwhile: it
    finishes its output before it stops, and a full pty would block it."""
    term.drain()
    stat = Path(f"/proc/{term.proc.pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"
