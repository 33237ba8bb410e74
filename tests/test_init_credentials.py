"""`co-tui init`: a provider's key, URL and model saved headless in a private file in the
user's config folder (never the project, never through a link), then used by the next run."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from co_tui.config.paths import user_credentials_path
from tests.cli_in_process import Ran, run_co_tui
from tests.servers.fake_openai import FakeOpenAIServer, text

KEY = "sk-test-0123456789"


def init(tmp_path: Path, *args: str, stdin: str = "") -> Ran:
    env = {**os.environ, "CO_TUI_SANDBOX_BACKEND": "subprocess"}
    return run_co_tui(["init", *args], tmp_path, env, stdin=stdin)


def test_init_saves_a_private_file_that_the_next_run_uses(tmp_path: Path) -> None:
    server = FakeOpenAIServer(default=text("answered with the saved key")).start()
    try:
        ran = init(tmp_path, "openai", "--url", f"{server.url}/v1", "--model", "fake", stdin=KEY)
        assert ran.returncode == 0, ran.stderr
        assert KEY not in ran.stdout + ran.stderr
        path = user_credentials_path()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert json.loads(path.read_text())["openai_api_key"] == KEY
        assert not any(tmp_path.iterdir())  # nothing in the project
        env = {**os.environ, "CO_TUI_SANDBOX_BACKEND": "subprocess"}
        answered = run_co_tui(["-p", "hello"], tmp_path, env)
        assert answered.returncode == 0, answered.stderr
        assert "answered with the saved key" in answered.stdout
        sent = server.requests[-1]
        assert sent.body["model"] == "fake"
    finally:
        server.stop()


def test_init_again_keeps_what_was_saved_for_another_provider(tmp_path: Path) -> None:
    assert init(tmp_path, "gemini", stdin=KEY).returncode == 0
    assert init(tmp_path, "ollama", "--url", "http://127.0.0.1:11434").returncode == 0
    saved = json.loads(user_credentials_path().read_text())
    assert saved["gemini_api_key"] == KEY and saved["llm_provider"] == "ollama"


def test_a_link_at_the_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("{}\n")
    path = user_credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    ran = init(tmp_path, "gemini", stdin=KEY)
    assert ran.returncode == 2
    assert "symbolic link" in ran.stderr and "nothing saved" in ran.stderr
    assert target.read_text() == "{}\n" and path.is_symlink()
    # And a run does not read keys through it either.
    env = {**os.environ, "CO_TUI_SANDBOX_BACKEND": "subprocess"}
    status = run_co_tui(["-p", "hi"], tmp_path, env)
    assert status.returncode != 0 and "symbolic link" in status.stderr


def test_bad_input_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    missing_key = init(tmp_path, "gemini", stdin="")
    assert missing_key.returncode == 2 and "gemini needs a key" in missing_key.stderr
    unknown = init(tmp_path, "anthropic", stdin=KEY)
    assert unknown.returncode == 2 and "unknown provider 'anthropic'" in unknown.stderr
    bad_url = init(tmp_path, "ollama", "--url", "not a url\x1b[2J")
    assert bad_url.returncode == 2 and "is not an http(s) URL" in bad_url.stderr
    assert "\x1b" not in bad_url.stderr  # shown escaped, as repr does
    assert not user_credentials_path().exists()
