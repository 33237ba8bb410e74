"""Secrets never reach the database: configured ones and well-known key shapes, in the
prompt, the tool arguments and the tool output, however JSON-escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from co_tui.config.settings import Settings
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.safety.redaction import REDACTED, Redactor
from co_tui.telemetry import setup_telemetry, shutdown_telemetry
from co_tui.turn.runner import run_turn
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


# One case per credential shape: (text, the secret that must go, what must stay).
SHAPE_CASES = [
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXBhcnQ done",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXBhcnQ",
        "jwt ",
    ),
    (
        "git clone https://alice:hunter2pw@github.com/x.git",
        "hunter2pw",
        "https://alice:[REDACTED]@github.com/x.git",
    ),
    ("redis://:s3cretpass@localhost:6379/0", "s3cretpass", "redis://:[REDACTED]@localhost"),
    ("id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "id "),
    (
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = "
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [REDACTED]",
    ),
    ("AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", ","),
    (
        "refresh_token 1//0gdfVGhBcDeFgHiJkLmNoPqRsTuVwXyZ-012345",
        "1//0gdfVGhBcDeFgHiJkLmNo",
        "refresh_token ",
    ),
    ("GOCSPX-1a2B3c4D5e6F7g8H9i0JkLmNoPq", "GOCSPX-1a2B3c4D5e6F7g8H9i0JkLmNoPq", ""),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7b\nq9Zx==\n-----END RSA PRIVATE KEY-----"
        "\nafter",
        "MIIEowIBAAKCAQEA7b",
        "\nafter",
    ),
    (
        "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkq\\n-----END PRIVATE KEY-----\\n",
        "MIIEvQIBADANBgkq",
        "",
    ),  # JSON-escaped line breaks
    ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIOzQ\n(cut here)", "MHcCAQEEIOzQ", "(cut here)"),
    ("Authorization: Bearer abc.def-123_XYZ", "abc.def-123_XYZ", "Authorization: Bearer "),
    ("authorization: basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "authorization: basic "),
    ("xoxb-1234567890-abcdefghijkl and xoxp-9-8-7-abcdefghi", "abcdefghijkl", " and "),
    ("SLACK_APP=xapp-1-A0123-4567-abcdef0123", "xapp-1-A0123-4567-abcdef0123", "SLACK_APP="),
    (
        "hook https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
        "XXXXXXXXXXXXXXXX",
        "https://hooks.slack.com/services/",
    ),
    ("ghp_" + "a1B2" * 9, "a1B2a1B2a1B2", ""),
    ("github_pat_11AAAAAAA0abcdefghijklmnop_qrstuvwxyz", "github_pat_11AAAAAAA0", ""),
    ("glpat-abcdefghij0123456789", "glpat-abcdefghij0123456789", ""),
    ("npm_" + "Ab1" * 12, "npm_Ab1Ab1", ""),
    ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", ""),
    ("key sk-ant-api03-abcdefghijklmnopqrstu", "sk-ant-api03-abcdefghijklmnopqrstu", "key "),
    ("key sk-Abcdefghijklmnop12345", "sk-Abcdefghijklmnop12345", "key "),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA-1234567890abc", ""),
    ("ya29.a0AfH6SMBx-abcdefghijklmnopqrst", "ya29.a0AfH6SMBx", ""),
    ("DB_PASSWORD=correct-horse-battery", "correct-horse-battery", "DB_PASSWORD="),
    ("passwd: hunter22", "hunter22", "passwd: "),
    ('{"client_secret": "shh-1234", "n": 1}', "shh-1234", '{"client_secret": "'),
    ('{\\"api_key\\": \\"zzz-9999\\"}', "zzz-9999", '{\\"api_key\\": \\"'),
    ("https://api.example.com/v1?access_token=abc123def456&page=2", "abc123def456", "&page=2"),
    ("TOKEN := tok-0987654321", "tok-0987654321", "TOKEN := "),
]
NEAR_MISSES = [
    "the bearer instruments were fine; a bearer of bad news",
    "git show 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 and cafe1234",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "pip install scikit-learn (sk-learn-compatible) for task-list and risk-assessment",
    "max_tokens=4096, token_count: 55, tokens = 12, token_type: bearer, tokenizer=gpt2",
    "the password is on the sticky note; keep it secret, keep it safe",
    "http://localhost:8000/path and ssh://git@github.com:22/org/repo",
    "see https://example.com/a//b and 1//2 as a fraction",
    "AKIA is a prefix; ASIA is a continent; eyJ alone is nothing",
    "secret=[REDACTED] and Bearer [REDACTED]",
    "passwd: x, token: 12",  # too short to be a value
    "the sha is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
]


@pytest.mark.parametrize(("text", "secret", "kept"), SHAPE_CASES)
def test_each_shape(text: str, secret: str, kept: str) -> None:
    out = Redactor().text(text)
    assert secret not in out and REDACTED in out, out
    assert kept in out, out
    assert Redactor().text(out) == out  # redacting twice changes nothing


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_left_alone(text: str) -> None:
    assert Redactor().text(text) == text


def test_configured_secret_in_mixed_case_text_and_non_ascii() -> None:
    redactor = Redactor(["Zq8vL2mN4pR6"])
    assert redactor.text("İ PASSWORD=abcdef Zq8vL2mN4pR6 ß") == "İ PASSWORD=[REDACTED] [REDACTED] ß"
    assert redactor.text("zq8vl2mn4pr6") == "zq8vl2mn4pr6"  # configured secrets are exact
