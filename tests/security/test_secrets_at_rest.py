"""Secrets at rest: everything co-tui writes under the data folder is private to the user
(folder 0700, files 0600, SQLite's -wal and -shm too) and holds no secret, after real runs:
`co-tui -p` against TestModel and against a local OpenAI-compatible server that echoes a
corpus of credentials, and the app (Pilot) with a prompt history."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from co_tui.config.data_at_rest import protect_data_at_rest
from co_tui.config.paths import user_config_dir, user_data_dir
from co_tui.config.settings import Settings
from co_tui.store.session_store import SessionStore
from co_tui.telemetry.store import open_for_writing
from co_tui.tui.widgets.prompt import PromptHistory
from tests.cli_in_process import Ran, run_co_tui
from tests.servers.fake_openai import serve, text, tool_call
from tests.tui.helpers import SIZE, make_app, settle

CLI = [str(Path(sys.executable).parent / "co-tui")]
CONFIGURED = "Zq8vL2mN4pR6tX1yCfgKey"  # the OpenAI key in settings: no known shape
PRIVATE_KEY_LINES = [
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "QyNTUxOQAAACBkZXZpY2Uta2V5LWZvci10ZXN0cy1vbmx5LXh4eHh4eHh4eAAAAJgAAAAA",
]
PRIVATE_KEY = "\n".join(
    ["-----BEGIN OPENSSH PRIVATE KEY-----", *PRIVATE_KEY_LINES, "-----END OPENSSH PRIVATE KEY-----"]
)
# (a line as it appears in the prompt, the tool output and the answer; the secret parts of it)
CORPUS: list[tuple[str, list[str]]] = [
    (
        "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"],
    ),
    ("clone https://deploy:Pa55w0rdInUrl9x@git.example.com/r.git", ["Pa55w0rdInUrl9x"]),
    (
        "aws AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ["AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
    ),
    ("refresh 1//0gAbCdEfGhIjKlMnOpQrStUvWxYz0123456789", ["1//0gAbCdEfGhIjKlMnOpQrStUvWxYz"]),
    ("client GOCSPX-AbCdEfGhIjKlMnOpQrStUvWx1234", ["GOCSPX-AbCdEfGhIjKlMnOpQrStUvWx1234"]),
    ("curl -H 'Authorization: Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5'", ["Zm9vYmFyYmF6cXV4MTIzNDU2"]),
    ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", ["xoxb-123456789012-1234567890"]),
    ("gh ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", ["ghp_AbCdEfGhIjKlMnOpQrStUvWxYz"]),
    (
        "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        ["github_pat_11ABCDEFG0123456789"],
    ),
    ("openai sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9", ["sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7"]),
    ("anthropic sk-ant-api03-Xy9Wv8Ut7Sr6Qp5On4Ml3Kj2", ["sk-ant-api03-Xy9Wv8Ut7Sr6Qp5"]),
    ("google AIzaSyD-AbCdEfGhIjKlMnOpQrStUvWxYz012345", ["AIzaSyD-AbCdEfGhIjKlMnOpQrSt"]),
    ("env password=correct-horse-battery-42", ["correct-horse-battery-42"]),
    ("env CLIENT_SECRET=s3cr3t-v4lue-xyz", ["s3cr3t-v4lue-xyz"]),
    ("url https://api.example.com/x?token=tok9f8e7d6c5b4a3", ["tok9f8e7d6c5b4a3"]),
    (f"configured {CONFIGURED}", [CONFIGURED]),
]
SECRETS = [secret for _, parts in CORPUS for secret in parts] + PRIVATE_KEY_LINES
CORPUS_TEXT = "\n".join([line for line, _ in CORPUS] + [PRIVATE_KEY]) + "\n"


def encodings(secret: str) -> list[bytes]:
    once = json.dumps(secret)[1:-1]
    return [s.encode() for s in {secret, once, json.dumps(once)[1:-1], secret[-16:]}]


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def leaks(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in files_under(root):
        blob = path.read_bytes()
        hits = [s for s in SECRETS if any(e in blob for e in encodings(s))]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_private(root: Path) -> None:
    assert mode(root) == 0o700, oct(mode(root))
    wrong = {
        str(p.relative_to(root)): oct(mode(p))
        for p in [root, *root.rglob("*")]
        if mode(p) != (0o700 if p.is_dir() else 0o600)
    }
    assert wrong == {}


def run_cli(args: list[str], cwd: Path, **env: str) -> Ran:
    """`co-tui ARGS` in this process (tests/cli_in_process.py)."""
    return run_co_tui(args, cwd, {**os.environ, "CO_TUI_SANDBOX_BACKEND": "subprocess", **env})


def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.mark.slow
def test_headless_run_with_test_model_leaves_only_private_files(tmp_path: Path) -> None:
    proc = run_cli(["-p", "hello", "--model", "test", "--yes"], workspace(tmp_path))
    assert proc.returncode == 0, proc.stderr
    data = user_data_dir()
    names = {p.name for p in files_under(data)}
    assert {"sessions.db", "co-tui.db"} <= names
    assert_private(data)


@pytest.mark.slow
def test_a_run_full_of_secrets_leaves_none_under_the_data_folder(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "corpus.txt").write_text(CORPUS_TEXT)
    command = f"cat corpus.txt && touch made-by-a-command.txt && echo {shlex.quote(CORPUS[0][0])}"
    script = [
        tool_call("run_shell_command", cmd=command),
        tool_call("save_memory", content=f"The deploy uses {CORPUS[12][0]}", tags=["deploy"]),
        text(f"Here is everything you gave me:\n{CORPUS_TEXT}", chunks=5),
    ]
    prompt = f"Remember these and print them back:\n{CORPUS_TEXT}"
    with serve(script) as srv:
        env = {
            "LLM_PROVIDER": "openai",
            "OPENAI_BASE_URL": f"{srv.url}/v1",
            "OPENAI_API_KEY": CONFIGURED,
            "CO_TUI_OPENAI_MODEL": "fake",
        }
        proc = run_cli(["-p", prompt, "--yes"], ws, **env)
    assert proc.returncode == 0, proc.stderr
    assert "AKIAIOSFODNN7EXAMPLE" in proc.stdout  # the user still sees the answer as it was
    tool_message = srv.requests[1].body["messages"][-1]
    assert "Pa55w0rdInUrl9x" in tool_message["content"]  # the command really printed them

    data = user_data_dir()
    memories = list((data / "memories").glob("*.md"))
    assert len(memories) == 1 and "[REDACTED]" in memories[0].read_text()
    assert {"sessions.db", "co-tui.db"} <= {p.name for p in files_under(data)}
    assert leaks(data) == {}
    assert_private(data)
    # No process-wide umask: what the command made in the workspace has the usual mode.
    umask = os.umask(0)
    os.umask(umask)
    assert mode(ws / "made-by-a-command.txt") == 0o666 & ~umask


def test_open_databases_keep_their_wal_and_shm_private(tmp_path: Path) -> None:
    data = user_data_dir()
    store = SessionStore(secrets=[CONFIGURED])
    spans = open_for_writing(data / "co-tui.db")
    try:
        from pydantic_ai.messages import ModelRequest, UserPromptPart

        store.save("s1", [ModelRequest(parts=[UserPromptPart(content=CORPUS_TEXT)])])
        with spans:
            spans.execute(
                "INSERT INTO spans (id, trace_id, name, start_time) VALUES ('a', 'b', 'c', 1)"
            )
        side_files = {p.name for p in data.iterdir() if p.name.endswith(("-wal", "-shm"))}
        assert side_files == {
            "sessions.db-wal",
            "sessions.db-shm",
            "co-tui.db-wal",
            "co-tui.db-shm",
        }
        assert_private(data)
        assert leaks(data) == {}
    finally:
        store.close()
        spans.close()


@pytest.mark.slow
def test_existing_wide_files_are_narrowed_at_start(tmp_path: Path) -> None:
    data = user_data_dir()
    wide = ("history", "memories/0001-x.md", "logs/mcp-x.log", "notes-index/abc.sqlite")
    for relative in wide:
        path = data / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        path.chmod(0o644)
    for folder in (data, data / "memories", data / "logs", data / "notes-index"):
        folder.chmod(0o755)
    config = user_config_dir()
    config.mkdir(parents=True)
    config.chmod(0o755)
    (config / "google_token.json").write_text("{}")
    (config / "google_token.json").chmod(0o644)
    (config / "settings.json").write_text("{}")
    (config / "settings.json").chmod(0o644)
    (data / "old.db-shm").write_text("")
    (data / "old.db-shm").chmod(0o644)

    proc = run_cli(["-p", "hello", "--model", "test"], workspace(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert_private(data)
    assert mode(config) == 0o700 and mode(config / "google_token.json") == 0o600
    assert mode(config / "settings.json") == 0o644  # the user's own file: the folder guards it


@pytest.mark.e2e
def test_bare_co_tui_protects_the_data_folder_before_the_session_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`co-tui` alone (the console script, no command-line parser) does what the parser's
    paths do, when the app loads its settings after the first frame: the data folder
    private, the configured secrets known to every writer."""
    from co_tui import entry
    from co_tui.safety.redaction import shared_redactor

    data = user_data_dir()
    (data / "memories").mkdir(parents=True)
    (data / "memories" / "0001-x.md").write_text("")
    (data / "memories" / "0001-x.md").chmod(0o644)
    for folder in (data, data / "memories"):
        folder.chmod(0o755)
    monkeypatch.setenv("OPENAI_API_KEY", CONFIGURED)
    monkeypatch.setattr(sys, "argv", ["co-tui"])
    monkeypatch.chdir(workspace(tmp_path))
    launched: list[Any] = []
    monkeypatch.setattr("co_tui.tui.launch.launch_app", lambda load: launched.append(load()))

    entry.main()
    assert [loaded.settings.openai_api_key.get_secret_value() for loaded in launched] == [
        CONFIGURED
    ]
    assert_private(data)
    assert shared_redactor().text(f"use {CONFIGURED} now") == "use [REDACTED] now"


def test_history_redacts_on_load_and_narrows_the_file(tmp_path: Path) -> None:
    path = tmp_path / "data" / "history"
    path.parent.mkdir()
    lines = ["ls", f"my key is {CORPUS[9][0].split()[1]}", CORPUS[2][0].split()[1], "status"]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    path.chmod(0o644)
    history = PromptHistory(path)
    assert history.entries == ["ls", "my key is [REDACTED]", "status"]
    assert mode(path) == 0o600 and b"sk-proj" not in path.read_bytes()


# Shapes the redactor learnt later: (a prompt, the secret in it)
LATER_SHAPES = [
    ("vault login hvs.CAESIJlWh8D3Jx0eK0SAbCdEfGhIjKlMnOpQrStUvWxYz", "hvs.CAESIJlWh8D3Jx0eK0SAbC"),
    (
        "conn AccountName=a;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UV==;x=1",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1",
    ),
    ("run mysql -uroot -pTr0ub4dor shop", "Tr0ub4dor"),
    ("pay with 4111 1111 1111 1111 please", "4111 1111 1111 1111"),
]


def test_history_keeps_no_vault_azure_mysql_or_card_secret(tmp_path: Path) -> None:
    path = tmp_path / "data" / "history"
    path.parent.mkdir()
    history = PromptHistory(path)
    for prompt, _secret in LATER_SHAPES:
        history.add(prompt)
    stored = path.read_text()
    assert [secret for _, secret in LATER_SHAPES if secret in stored] == []
    assert stored.count("[REDACTED]") == len(LATER_SHAPES)
    assert PromptHistory(path).entries[-1] == "pay with [REDACTED] please"


def _stream(answer: str) -> Any:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield answer

    return stream


async def test_app_prompt_history_keeps_no_secret_and_files_stay_private(tmp_path: Path) -> None:
    settings = Settings(theme="textual-dark", openai_api_key=CONFIGURED)
    protect_data_at_rest(settings)  # as the launcher does before the app starts
    data = user_data_dir()
    history = data / "history"
    answer = _stream(f"echo: {CORPUS_TEXT}")
    app = make_app(answer, workspace(tmp_path), settings=settings, history_path=history)
    prompts = [
        f"use {CONFIGURED} for the call",
        CONFIGURED,  # only a secret: not stored at all
        f"and this {CORPUS[7][0]}\n{PRIVATE_KEY}",
        "an ordinary question",
    ]
    async with app.run_test(size=SIZE) as pilot:
        for prompt in prompts:
            app.chat.prompt.text = prompt
            await pilot.press("enter")
            await settle(pilot, app)
        assert app.prompt_history.entries[-1] == "an ordinary question"
    stored = [json.loads(line) for line in history.read_text().splitlines()]
    assert stored[0] == "use [REDACTED] for the call"
    assert stored[1].startswith("and this gh [REDACTED]")
    assert stored[2:] == ["an ordinary question"]
    assert leaks(data) == {}
    assert_private(data)
