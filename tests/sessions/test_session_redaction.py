"""Secrets never reach session rows: configured values and credential-shaped strings."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.sessions import SessionStore

CONFIGURED = "my-slack-token-value-1234"
SHAPED = "sk-proj-abcdefghijklmnopqrstuvwx"


def test_secrets_are_redacted_before_they_are_written(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    store = SessionStore(db, secrets=[CONFIGURED])
    messages = [
        ModelRequest(parts=[UserPromptPart(content=f"use {CONFIGURED} and {SHAPED}")]),
        ModelResponse(parts=[ToolCallPart("run_shell_command", {"cmd": f"echo {SHAPED}"}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("run_shell_command", f"{CONFIGURED}\n", "c1")]),
        ModelResponse(parts=[TextPart(content="done")]),
    ]
    store.save("s1", messages, title=f"use {CONFIGURED}")
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert CONFIGURED.encode() not in raw
    assert SHAPED.encode() not in raw
    assert b"[REDACTED]" in raw
    loaded = SessionStore(db).load("s1")
    assert "[REDACTED]" in str(loaded.messages[0].parts[0].content)
    assert loaded.messages[-1].parts[0].content == "done"
