"""`co-tui init`: a provider's key, URL and model saved headless in a private file in the
user's config folder (never the project, never through a link), then used by the next run."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from co_tui.config.paths import project_settings_path, user_credentials_path
from tests.cli_in_process import Ran, run_co_tui
from tests.servers.fake_openai import FakeOpenAIServer, text
from tests.servers.http_fake import FakeServer, Received, Reply
from tests.servers.models_fake import ModelsServer

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
    assert init(tmp_path, "gemini", "--no-check", stdin=KEY).returncode == 0
    ollama = ModelsServer(["llama3.2:3b"]).start()
    try:
        ran = init(tmp_path, "ollama", "--url", ollama.url)
    finally:
        ollama.stop()
    assert ran.returncode == 0, ran.stderr
    assert "it serves llama3.2:3b" in ran.stdout
    saved = json.loads(user_credentials_path().read_text())
    assert saved["gemini_api_key"] == KEY and saved["llm_provider"] == "ollama"
    assert saved["ollama_model"] == "llama3.2:3b"  # the default (qwen3:4b) is not pulled there


def test_a_link_at_the_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("{}\n")
    path = user_credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    ran = init(tmp_path, "gemini", "--no-check", stdin=KEY)
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


class KeyedModels(FakeServer):
    """An OpenAI-compatible model list that answers 401 to any key but KEY."""

    def route(self, req: Received) -> Reply:
        if req.headers.get("authorization") != f"Bearer {KEY}":
            return Reply(401, {"error": {"message": "Incorrect API key provided"}})
        return Reply(body={"object": "list", "data": [{"id": "fake"}]})


def test_init_asks_the_provider_first_and_saves_nothing_when_it_fails(tmp_path: Path) -> None:
    server = KeyedModels().start()
    try:
        url = f"{server.url}/v1"
        refused = init(tmp_path, "openai", "--url", url, stdin="sk-wrong-key-123")
        assert refused.returncode == 2
        assert "nothing saved" in refused.stderr and "refused the key" in refused.stderr
        assert "sk-wrong" not in refused.stderr
        unknown = init(tmp_path, "openai", "--url", url, "--model", "gpt-9", stdin=KEY)
        assert unknown.returncode == 2
        assert "does not serve a model named 'gpt-9' (it serves: fake)" in unknown.stderr
    finally:
        server.stop()
    unreachable = init(tmp_path, "ollama", "--url", "http://127.0.0.1:9")
    assert unreachable.returncode == 2
    assert "could not connect to 127.0.0.1:9" in unreachable.stderr
    assert "--no-check" in unreachable.stderr
    assert not user_credentials_path().exists()
    offline = init(tmp_path, "ollama", "--url", "http://127.0.0.1:9", "--no-check")
    assert offline.returncode == 0, offline.stderr
    assert json.loads(user_credentials_path().read_text())["llm_provider"] == "ollama"


def test_a_projects_settings_do_not_choose_where_the_key_is_tested(tmp_path: Path) -> None:
    """A cloned repository that names its own server gets neither the key nor the test."""
    trap = ModelsServer(["fake"]).start()
    try:
        project_settings_path(tmp_path).parent.mkdir()
        project_settings_path(tmp_path).write_text(
            json.dumps({"openai_base_url": f"{trap.url}/v1", "ollama_host": trap.url})
        )
        keyed = init(tmp_path, "openai", stdin=KEY)  # the official API: no network here
        local = init(tmp_path, "ollama")  # localhost:11434, where no Ollama runs
    finally:
        trap.stop()
    assert trap.received == []
    assert keyed.returncode == 2 and local.returncode == 2
    assert not user_credentials_path().exists()


def test_status_says_which_credentials_file_is_in_use(tmp_path: Path) -> None:
    env = {**os.environ, "CO_TUI_SANDBOX_BACKEND": "subprocess", "COLUMNS": "300"}

    def credentials_row() -> str:
        status = run_co_tui(["status"], tmp_path, env)
        assert status.returncode == 0, status.stderr
        return next(line for line in status.stdout.splitlines() if "Credentials" in line)

    assert "(not present)" in credentials_row()
    assert init(tmp_path, "gemini", "--no-check", stdin=KEY).returncode == 0
    row = credentials_row()
    assert f"{user_credentials_path()} (gemini, in use)" in row
    env["CO_TUI_LLM_PROVIDER"] = "ollama"
    assert "(gemini; not in use: ollama is chosen)" in credentials_row()
    assert KEY not in row
