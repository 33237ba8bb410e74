"""Settings layering and the one-line messages for malformed settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from co_tui.config import SettingsError, load_settings, user_settings_path

CLI = [str(Path(sys.executable).parent / "co-tui")]


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_defaults_then_user_then_project_then_environment(tmp_path: Path) -> None:
    write(user_settings_path(), {"max_request_limit": 10, "tool_retries": 5, "theme": "nord"})
    write(tmp_path / ".co-tui" / "settings.json", {"max_request_limit": 12, "tool_retries": 6})
    env = {
        "CO_TUI_TOOL_RETRIES": "7",
        "OLLAMA_HOST": "http://127.0.0.1:9",
        "LLM_PROVIDER": "ollama",
    }
    s = load_settings(tmp_path, env=env)
    assert s.theme == "nord"  # user
    assert s.max_request_limit == 12  # project beats user
    assert s.tool_retries == 7  # environment beats both
    assert (s.ollama_host, s.llm_provider) == ("http://127.0.0.1:9", "ollama")
    assert s.model_http_retries == 2  # default


def test_structured_environment_values(tmp_path: Path) -> None:
    env = {
        "CO_TUI_SHELL_SAFE_COMMANDS": "ls, cat",
        "CO_TUI_WEB_POLICY": '{"search": "ask", "fetch": "deny"}',
    }
    s = load_settings(tmp_path, env=env)
    assert s.shell_safe_commands == ["ls", "cat"]
    assert (s.web_policy.search, s.web_policy.fetch) == ("ask", "deny")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"max_request_limit": 10,}', "invalid JSON at line 1"),
        (
            '{"max_request_limit": "lots"}',
            "field 'max_request_limit': input should be a valid integer",
        ),
        ('{"sandbox_backend": "vm"}', "field 'sandbox_backend'"),
        ('{"max_reqest_limit": 3}', "unknown setting (did you mean 'max_request_limit'?)"),
        ('["not", "an", "object"]', "expected a JSON object"),
        ('{"web_policy": {"fetch": "sometimes"}}', "field 'web_policy.fetch'"),
    ],
)
def test_malformed_project_settings_name_the_file_and_field(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = write(tmp_path / ".co-tui" / "settings.json", content)
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, env={})
    message = str(info.value)
    assert str(path) in message and expected in message
    assert "\n" not in message


def test_malformed_environment_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, env={"CO_TUI_MAX_REQUEST_LIMIT": "many"})
    assert "environment variable CO_TUI_MAX_REQUEST_LIMIT" in str(info.value)


def test_error_is_attributed_to_the_layer_that_set_the_field(tmp_path: Path) -> None:
    write(user_settings_path(), {"tool_retries": 2})
    bad = write(tmp_path / ".co-tui" / "settings.json", {"tool_retries": -1})
    with pytest.raises(SettingsError, match=str(bad)):
        load_settings(tmp_path, env={})


def test_cli_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    write(tmp_path / ".co-tui" / "settings.json", '{"max_request_limit": "x"}')
    proc = subprocess.run(
        [*CLI, "-p", "hi", "--model", "test"],
        cwd=tmp_path,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert ".co-tui/settings.json" in lines[0] and "max_request_limit" in lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout


def test_project_layer_widens_nothing_until_the_project_is_trusted(tmp_path: Path) -> None:
    write(user_settings_path(), {"shell_safe_commands": ["ls", "cat"]})
    project = {"auto_confirm": True, "shell_safe_commands": ["ls", "rm"], "tool_retries": 1}
    write(tmp_path / ".co-tui" / "settings.json", project)
    s = load_settings(tmp_path, env={})
    assert s.auto_confirm is False  # widens: held back (co_tui.trust)
    assert s.shell_safe_commands == ["ls"]  # rm held back, dropping cat narrows: applies
    assert s.tool_retries == 1  # widens nothing: applies
