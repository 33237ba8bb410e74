"""Secrets never reach the database: configured ones and well-known key shapes, in the
prompt, the tool arguments and the tool output, however JSON-escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from co_tui.config import Settings
from co_tui.orchestrator import ApprovalDecision, run_turn
from co_tui.orchestrator.recording import RecordingFrontend
from co_tui.telemetry import setup_telemetry, shutdown_telemetry
from co_tui.telemetry.redact import REDACTED, Redactor
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps

CONFIGURED = 'tok"en\\with-escapes-9f8e7d'  # a quote and a backslash: JSON escapes both
OPENAI_KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
GOOGLE_KEY = "AIza" + "SyD-abcdefghijklmnopqrstuvwx12345"
SLACK_TOKEN = "xoxb-1234567890-abcdefghijkl"
GITHUB_TOKEN = "ghp_" + "Z" * 36
BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig"
UNCONFIGURED = [OPENAI_KEY, GOOGLE_KEY, SLACK_TOKEN, GITHUB_TOKEN]


def _encodings(secret: str) -> list[bytes]:
    once = json.dumps(secret)[1:-1]
    twice = json.dumps(once)[1:-1]
    core = secret[-16:]  # any long tail of the secret is a leak too
    return [s.encode() for s in {secret, once, twice, core}]


def _leaks(paths: list[Path], secrets: list[str]) -> list[str]:
    blob = b"".join(p.read_bytes() for p in paths if p.exists())
    return [s for s in secrets if any(e in blob for e in _encodings(s))]


async def test_no_secret_reaches_the_database(tmp_path: Path) -> None:
    db = tmp_path / "data" / "co-tui.db"
    settings = Settings(slack_bot_token=CONFIGURED)
    assert setup_telemetry(settings, db) is not None
    workspace = tmp_path / "ws"
    workspace.mkdir()
    all_secrets = [CONFIGURED, *UNCONFIGURED]
    (workspace / "keys.txt").write_text("\n".join([*all_secrets, BEARER]) + "\n")
    cmd = f"cat keys.txt; echo {OPENAI_KEY} {GOOGLE_KEY}"
    prompt = f"my keys: {CONFIGURED} {SLACK_TOKEN} {GITHUB_TOKEN} and {BEARER}"
    model = ScriptedModel(
        [Call("run_shell_command", {"cmd": cmd}, "c1")],
        [f"Your token is {CONFIGURED} and {OPENAI_KEY}."],
    )
    try:
        result = await run_turn(
            make_bundle(model.model, settings).agent,
            prompt,
            deps=make_deps(workspace, settings),
            history=[],
            frontend=RecordingFrontend([ApprovalDecision.APPROVE]),
        )
        assert result.ok, result.error
        assert CONFIGURED in (result.output or "")  # the user still sees it; spans do not
    finally:
        shutdown_telemetry()

    files = [db, db.with_name(db.name + "-wal")]
    blob = b"".join(p.read_bytes() for p in files if p.exists())
    assert REDACTED.encode() in blob
    assert b"keys.txt" in blob  # the rest of the command is kept
    assert _leaks(files, all_secrets) == []
    assert b"eyJhbGciOiJIUzI1NiJ9" not in blob


@pytest.mark.parametrize("secret", [*UNCONFIGURED, "Bearer abcdefgh12345678"])
def test_patterns(secret: str) -> None:
    out = Redactor().text(f"x {secret} y")
    assert secret not in out and REDACTED in out and out.startswith("x ")


def test_json_inside_json() -> None:
    redactor = Redactor([CONFIGURED])
    inner = json.dumps({"cmd": f"echo {CONFIGURED}"})
    outer = json.dumps([{"parts": [{"arguments": inner}]}])
    out = redactor.value({"gen_ai.input.messages": outer, "n": 3, "ok": True})
    text = json.dumps(out)
    assert not any(e.decode() in text for e in _encodings(CONFIGURED))
    assert out["n"] == 3 and out["ok"] is True
    arguments = json.loads(out["gen_ai.input.messages"])[0]["parts"][0]["arguments"]
    assert json.loads(arguments)["cmd"] == "echo [REDACTED]"


def test_escaped_forms_in_error_messages() -> None:
    redactor = Redactor([CONFIGURED])
    message = f"Extra inputs are not permitted [input_value={CONFIGURED!r}]"
    assert "escapes-9f8e7d" not in redactor.text(message)
    assert "escapes-9f8e7d" not in redactor.value(json.dumps({"m": message}))


def test_plain_text_untouched() -> None:
    redactor = Redactor(["hunter2hunter2"])
    assert redactor.value('{"a": "skip this", "b": [1, 2]}') == '{"a": "skip this", "b": [1, 2]}'
    assert redactor.text("task-list sk-short") == "task-list sk-short"
