"""Secrets never reach session rows: configured values and credential-shaped strings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.safety.redaction import Redactor
from co_tui.store.session_store import SessionStore
from tests.sizes import examples

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


# Pieces of credentials and of JSON syntax: redacting JSON text must never break it.
FRAGMENTS = [
    '"',
    "\\",
    "\n",
    "\\n",
    "\t",
    ":",
    "=",
    "@",
    "/",
    ".",
    " ",
    "'",
    "é",
    "ß",
    "password=",
    "token: ",
    "secret",
    "Bearer ",
    "authorization: basic ",
    "://u:",
    "@host",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "MIIEowIBAAK==",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "eyJhbGciOiJIUzI1NiJ9",
    "sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8",
    "1//0gAbCdEfGhIjKlMnOpQrSt",
    "xoxb-1234567890-abcdef",
    CONFIGURED,
    'q"u\\ote-secret',
]
strings = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=10).map(
    "".join
)


def json_values(leaves: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(strings, children, max_size=4)
        ),
        max_leaves=12,
    )


def nest(value: object, nesting: int) -> str:
    text = json.dumps(value)
    for _ in range(nesting):  # JSON inside JSON, as tool arguments inside messages
        text = json.dumps({"arguments": text})
    return text


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(json_values(st.none() | st.booleans() | strings), st.integers(min_value=0, max_value=2))
def test_redacting_json_text_keeps_it_json(value: object, nesting: int) -> None:
    """The text pass alone: no stretch it replaces cuts a string or an escape. (Not numbers:
    `password=1234` is redacted as a numeric password, even as a bare JSON number; json_text
    mends that, below.)"""
    redacted = Redactor([CONFIGURED, 'q"u\\ote-secret']).text(nest(value, nesting))
    json.loads(redacted)
    assert CONFIGURED not in redacted


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(
    json_values(st.none() | st.booleans() | st.integers() | strings),
    st.integers(min_value=0, max_value=2),
)
def test_secrets_that_look_like_json_literals_keep_it_json(value: object, nesting: int) -> None:
    """An MCP server's env values count as secrets, and "8080" or "true" are JSON too."""
    text = nest(value, nesting)
    redactor = Redactor([CONFIGURED, 'q"u\\ote-secret', "8080", "true"])
    redacted = redactor.json_text(text)
    json.loads(redacted)
    assert CONFIGURED not in redacted
    assert redactor.json_text('{"port": 8080, "on": true, "k": "x8080"}') == (
        '{"port": 8080, "on": true, "k": "x[REDACTED]"}'
    )


def test_adversarial_rows_still_load(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions.db", secrets=[CONFIGURED, 'q"u\\ote-secret'])
    nasty = "".join(FRAGMENTS) + '\\"-----BEGIN EC PRIVATE KEY-----\\\\nAB\\"'
    messages = [
        ModelRequest(parts=[UserPromptPart(content=nasty)]),
        ModelResponse(parts=[ToolCallPart("run_shell_command", {"cmd": nasty}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("run_shell_command", nasty, "c1")]),
    ]
    store.save("s1", messages, title=nasty)
    store.close()
    loaded = SessionStore(tmp_path / "sessions.db").load("s1")
    assert len(loaded.messages) == 3
    assert CONFIGURED not in str(loaded.messages) and "AKIAIOSFODNN7EXAMPLE" not in str(
        loaded.messages
    )
