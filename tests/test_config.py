"""Settings layering and the one-line messages for malformed settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from co_tui.config.paths import user_settings_path
from co_tui.config.settings import SettingsError
from co_tui.config.trust import load_settings
from tests.file_access import give_away, restricted

CLI = [str(Path(sys.executable).parent / "co-tui")]


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_defaults_then_user_then_project_then_environment(tmp_path: Path) -> None:
    write(user_settings_path(), {"max_request_limit": 10, "tool_retries": 5, "theme": "nord"})
    write(tmp_path / ".co-tui" / "settings.json", {"max_request_limit": 8, "tool_retries": 4})
    env = {
        "CO_TUI_TOOL_RETRIES": "7",
        "OLLAMA_HOST": "http://127.0.0.1:9",
        "LLM_PROVIDER": "ollama",
    }
    s = load_settings(tmp_path, env=env)
    assert s.theme == "nord"  # user
    assert s.max_request_limit == 8  # project beats user (lowering applies untrusted)
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


@pytest.mark.e2e
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
    assert s.auto_confirm is False  # widens: held back (co_tui.config.trust)
    assert s.shell_safe_commands == ["ls"]  # rm held back, dropping cat narrows: applies
    assert s.tool_retries == 1  # widens nothing: applies
    write(tmp_path / ".co-tui" / "settings.json", {"max_request_limit": 500})
    assert load_settings(tmp_path, env={}).max_request_limit == 25  # raising waits for trust


def test_objects_merge_key_by_key_across_user_and_project(tmp_path: Path) -> None:
    write(user_settings_path(), {"web_policy": {"search": "ask"}})
    write(tmp_path / ".co-tui" / "settings.json", {"web_policy": {"fetch": "deny"}})
    s = load_settings(tmp_path, env={})
    assert (s.web_policy.search, s.web_policy.fetch) == ("ask", "deny")


def test_a_project_rule_list_keeps_the_users_other_rule_lists(tmp_path: Path) -> None:
    """A hostile project adds an innocent-looking ask rule: with objects replaced whole, the
    user's deny rules went with it (and nothing looked like a widening to hold back)."""
    write(user_settings_path(), {"permissions": {"deny": ["shell(rm *)"]}})
    write(tmp_path / ".co-tui" / "settings.json", {"permissions": {"ask": ["shell(curl *)"]}})
    s = load_settings(tmp_path, env={})
    assert (s.permissions.deny, s.permissions.ask) == (["shell(rm *)"], ["shell(curl *)"])


def test_environment_beats_the_files_key_by_key(tmp_path: Path) -> None:
    write(user_settings_path(), {"web_policy": {"search": "ask"}, "tool_retries": 5})
    write(tmp_path / ".co-tui" / "settings.json", {"web_policy": {"fetch": "deny"}})
    env = {"CO_TUI_WEB_POLICY": '{"search": "deny"}', "CO_TUI_TOOL_RETRIES": "1"}
    s = load_settings(tmp_path, env=env)
    assert (s.web_policy.search, s.web_policy.fetch) == ("deny", "deny")
    assert s.tool_retries == 1


def test_lists_replace_rather_than_add_up(tmp_path: Path) -> None:
    write(user_settings_path(), {"web_fetch_blocked_domains": ["a.example"]})
    write(tmp_path / ".co-tui" / "settings.json", {"web_fetch_blocked_domains": ["b.example"]})
    env = {"CO_TUI_WEB_FETCH_BLOCKED_DOMAINS": "c.example, d.example"}
    assert load_settings(tmp_path, env={}).web_fetch_blocked_domains == [
        "b.example",
        "a.example",  # the project dropped it: that widens, so it stays until trusted
    ]
    assert load_settings(tmp_path, env=env).web_fetch_blocked_domains == [
        "c.example",
        "d.example",
    ]


def test_untrusted_project_keeps_what_narrows_within_an_object(tmp_path: Path) -> None:
    write(user_settings_path(), {"web_policy": {"search": "ask"}})
    project = {"web_policy": {"search": "allow", "fetch": "deny"}}
    write(tmp_path / ".co-tui" / "settings.json", project)
    s = load_settings(tmp_path, env={"CO_TUI_WEB_POLICY": '{"fetch": "ask"}'})
    assert (s.web_policy.search, s.web_policy.fetch) == ("ask", "ask")


def test_legacy_environment_names_are_aliases(tmp_path: Path) -> None:
    s = load_settings(tmp_path, env={"GEMINI_API_KEY": "gm-legacy", "LLM_PROVIDER": "gemini"})
    assert s.gemini_api_key is not None
    assert (s.gemini_api_key.get_secret_value(), s.llm_provider) == ("gm-legacy", "gemini")
    env = {"GEMINI_API_KEY": "gm-legacy", "CO_TUI_GEMINI_API_KEY": "gm-own"}
    s = load_settings(tmp_path, env=env)
    assert s.gemini_api_key is not None
    assert s.gemini_api_key.get_secret_value() == "gm-own"  # the co-tui name wins


def test_a_malformed_object_variable_names_the_variable_and_field(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, env={"CO_TUI_WEB_POLICY": '{"fetch": "sometimes"}'})
    assert str(info.value).startswith(
        "settings error: environment variable CO_TUI_WEB_POLICY: field 'web_policy.fetch':"
    )


def test_secrets_stay_out_of_repr(tmp_path: Path) -> None:
    server = {"command": "srv", "env": {"TOKEN": "mcp-secret-value"}}
    write(user_settings_path(), {"slack_bot_token": "xoxb-secret", "mcp_servers": {"m": server}})
    s = load_settings(tmp_path, env={"OPENAI_API_KEY": "sk-secret"})
    for shown in (repr(s), str(s)):
        assert not any(v in shown for v in ("xoxb-secret", "sk-secret", "mcp-secret-value"))
    assert sorted(s.secret_values()) == ["mcp-secret-value", "sk-secret", "xoxb-secret"]


def test_each_file_is_validated_on_its_own(tmp_path: Path) -> None:
    user = write(user_settings_path(), {"web_policy": {"fetch": "sometimes"}})
    write(tmp_path / ".co-tui" / "settings.json", {"web_policy": {"fetch": "deny"}})
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, env={})
    message = str(info.value)
    assert message.startswith(f"settings error: {user}: field 'web_policy.fetch':")
    assert "\n" not in message


def test_an_invalid_project_value_names_the_project_file_and_field(tmp_path: Path) -> None:
    write(user_settings_path(), {"web_policy": {"search": "ask"}})
    project = write(tmp_path / ".co-tui" / "settings.json", {"web_policy": {"fetch": "nope"}})
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, env={})
    message = str(info.value)
    assert message.startswith(f"settings error: {project}: field 'web_policy.fetch':")
    assert "'nope'" in message and "\n" not in message


def test_environment_names_are_not_settings_json_keys(tmp_path: Path) -> None:
    path = write(tmp_path / ".co-tui" / "settings.json", {"GEMINI_API_KEY": "gm-x"})
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, env={})
    assert str(info.value) == f"settings error: {path}: field 'GEMINI_API_KEY': unknown setting"


def test_a_secret_is_not_echoed_in_an_error(tmp_path: Path) -> None:
    path = write(user_settings_path(), {"openai_api_key": 123456789})
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, env={})
    assert str(path) in str(info.value) and "123456789" not in str(info.value)


def _user_settings_in_the_way(kind: str) -> tuple[str, str]:
    """Put `kind` of obstacle where the user settings file is read; (path, what is said)."""
    path = user_settings_path()
    if kind == "a folder for the file":
        path.mkdir(parents=True)
        return str(path), "is a folder, not a settings file; move it away"
    if kind == "a file for the folder":
        path.parent.parent.mkdir(parents=True, exist_ok=True)
        path.parent.write_text("{}")
        return str(path.parent), "is a file where the folder holding settings.json should be"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"theme": "\xff"}')
    return str(path), "not UTF-8 text; save it as UTF-8"


@pytest.mark.parametrize("kind", ["a folder for the file", "a file for the folder", "not UTF-8"])
def test_a_settings_file_in_the_way_is_named_not_skipped(tmp_path: Path, kind: str) -> None:
    where, said = _user_settings_in_the_way(kind)
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path, env={})
    message = str(info.value)
    assert message.startswith(f"settings error: {where}") and said in message
    assert "\n" not in message


def _cli(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, env=os.environ.copy(), capture_output=True, text=True, timeout=60
    )


@pytest.mark.e2e
def test_cli_names_a_folder_where_the_settings_file_should_be(tmp_path: Path) -> None:
    where, said = _user_settings_in_the_way("a folder for the file")
    proc = _cli([*CLI, "-p", "hi", "--model", "test"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"co-tui: settings error: {where} {said} (settings are one JSON file)"
    ]


@pytest.mark.e2e
@pytest.mark.parametrize("unreadable", ["folder", "file"])
def test_an_unreadable_config_folder_or_file_is_one_line(tmp_path: Path, unreadable: str) -> None:
    """Another user's config folder (0700) or settings file (0600)."""
    path = write(user_settings_path(), {"theme": "nord"})
    if unreadable == "folder":
        give_away(path.parent, 0o700)
        said = f"cannot read {path}: this user cannot enter the folder {path.parent}"
    else:
        give_away(path, 0o600)
        said = f"{path}: cannot read (Permission denied); make it readable by your user"
    proc = _cli(restricted([*CLI, "-p", "hi", "--model", "test"]), tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
