"""A session as Markdown: built from the replay events, redacted, written once and 0600;
`co-tui sessions export ID [file]` prints it or writes it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.safety.redaction import Redactor
from co_tui.session.export import ExportError, session_markdown, stored_session_markdown, write_new
from co_tui.store.records import Note, ToolRun
from co_tui.store.session_store import SessionStore
from tests.cli_in_process import Ran, run_co_tui

SID = "abcdef12-0000-0000-0000-000000000000"
KEY = "sk-live-0123456789abcdefghijklmnop"


def conversation() -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart("list the files\n    and `keep` this indent")]),
        ModelResponse(
            parts=[
                TextPart("Let me look."),
                ToolCallPart("run_shell_command", {"cmd": "ls -la"}, tool_call_id="c1"),
                ToolCallPart("run_shell_command", {"cmd": "rm -rf x"}, tool_call_id="c2"),
            ]
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("run_shell_command", "a.txt\n```\nb.txt", tool_call_id="c1"),
                ToolReturnPart(
                    "run_shell_command",
                    "Not run: the user denied this call.",
                    tool_call_id="c2",
                    outcome="denied",
                ),
            ]
        ),
        ModelResponse(parts=[TextPart(f"Two files. Your key {KEY} is safe.")]),
    ]


def test_markdown_has_prompts_answers_calls_decisions_and_results() -> None:
    text = session_markdown(
        conversation(),
        SID,
        decisions={"c1": "approve", "c2": "deny"},
        redactor=Redactor([KEY]),
    )
    assert text.startswith("# co-tui session abcdef12\n")
    assert "## You\n\nlist the files\n    and `keep` this indent" in text
    assert "## co-tui\n\nLet me look." in text
    assert '"cmd": "ls -la"' in text and "Decision: approved by you" in text
    assert "Decision: denied by you" in text and "Result (not run: denied)" in text
    assert "````\na.txt\n```\nb.txt\n````" in text  # a longer fence around a fence
    assert KEY not in text and "[REDACTED]" in text


def test_a_file_is_written_0600_and_never_replaced(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    write_new(target, "first")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    with pytest.raises(ExportError, match="already exists; nothing was written"):
        write_new(target, "second")
    assert target.read_text() == "first"
    (tmp_path / "link.md").symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(ExportError):
        write_new(tmp_path / "link.md", "through a link")
    assert not (tmp_path / "elsewhere.md").exists()


def stored(tmp_path: Path) -> SessionStore:
    store = SessionStore(tmp_path / "sessions.db", secrets=[KEY])
    store.save(SID, conversation(), title="list the files", cwd=str(tmp_path))
    store.calls_started(
        SID,
        [
            ToolRun("c1", "run_shell_command", {"cmd": "ls -la"}, "auto", "done", response_at=1),
            ToolRun(
                "c2", "run_shell_command", {"cmd": "rm -rf x"}, "deny", "denied", response_at=1
            ),
        ],
    )
    return store


def test_a_stored_session_exports_with_its_decisions(tmp_path: Path) -> None:
    store = stored(tmp_path)
    full_id, text = stored_session_markdown(store, SID[:8])
    assert full_id == SID
    assert "- title: list the files" in text
    assert "Decision: allowed without asking" in text and "Decision: denied by you" in text
    assert KEY not in text


@pytest.mark.e2e
def test_cli_exports_to_stdout_and_to_a_new_file(tmp_path: Path, isolated_env: Path) -> None:
    db = isolated_env / "data" / "co-tui" / "sessions.db"
    db.parent.mkdir(parents=True)
    stored(db.parent).close()

    def run(*args: str) -> Ran:
        return run_co_tui(["sessions", *args], tmp_path, dict(os.environ))

    printed = run("export", SID[:8])
    assert printed.returncode == 0, printed.stderr
    assert "## You" in printed.stdout and KEY not in printed.stdout
    written = run("export", SID[:8], "session.md")
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "session.md").read_text() == printed.stdout
    again = run("export", SID[:8], "session.md")
    assert again.returncode != 0 and "already exists" in again.stderr
    missing = run("export", "ffff")
    assert missing.returncode != 0 and "ffff" in missing.stderr
    listed = run()
    assert listed.returncode == 0 and "no sessions" in listed.stdout  # another directory


def test_an_error_the_transcript_showed_is_exported_in_its_place(tmp_path: Path) -> None:
    store = stored(tmp_path)
    store.add_note(SID, Note(position=2, message="the provider failed: 503 Service Unavailable"))
    _, text = stored_session_markdown(store, SID)
    error_at = text.index("503 Service Unavailable")
    assert text.index("ls -la") < error_at < text.index("Two files.")
