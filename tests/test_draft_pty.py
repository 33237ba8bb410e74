"""The real `co-tui` on a pseudo-terminal, killed with SIGKILL while a draft is typed: the
draft is back in the prompt when the session is resumed (--continue), and in the next new
session when nothing of the one that died was stored."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tests.servers.fake_openai import serve, text
from tests.test_peers_pty import co_tui, on_a_pty
from tests.test_signals import CLI, env_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux pseudo-terminal")

DRAFT = "unsent thought about llamas"


def drafts(isolated_env: Path) -> list[Path]:
    folder = isolated_env / "data" / "co-tui" / "drafts"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def kept_text(isolated_env: Path) -> str:
    texts = [json.loads(p.read_text(encoding="utf-8"))["text"] for p in drafts(isolated_env)]
    return texts[0] if len(texts) == 1 else ""


@pytest.mark.e2e
def test_a_draft_typed_before_kill_9_is_back_on_continue(
    tmp_path: Path, isolated_env: Path
) -> None:
    with serve([text("first answer"), text("second answer")]) as srv:
        env = env_for(srv.url)
        with co_tui(tmp_path, env) as term:
            term.type(b"first question\r")
            term.shows(b"first answer", "the first answer")
            term.type(DRAFT.encode())
            wait_for(lambda: kept_text(isolated_env) == DRAFT, "the draft on disk", term.proc)
            term.proc.send_signal(signal.SIGKILL)
            term.proc.wait(timeout=30)
        assert term.proc.returncode == -signal.SIGKILL
        with on_a_pty([*CLI, "--continue"], tmp_path, env) as again:
            again.shows(b"first answer", "the resumed transcript")
            again.shows(DRAFT.encode(), "the draft back in the prompt")
            again.type(b"\r")  # sent: the draft file goes
            again.shows(b"second answer", "the answer to the draft")
            wait_for(lambda: not drafts(isolated_env), "the draft file to go", again.proc)


@pytest.mark.e2e
def test_a_draft_of_a_session_never_stored_comes_back_in_the_next(
    tmp_path: Path, isolated_env: Path
) -> None:
    env = env_for("http://127.0.0.1:9")
    with co_tui(tmp_path, env) as term:
        term.type(DRAFT.encode())
        wait_for(lambda: kept_text(isolated_env) == DRAFT, "the draft on disk", term.proc)
        term.proc.send_signal(signal.SIGKILL)
        term.proc.wait(timeout=30)
    with co_tui(tmp_path, env) as again:
        again.shows(DRAFT.encode(), "the draft back in the prompt")
