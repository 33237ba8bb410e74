"""Settings: defaults < user settings.json < project .co-tui/settings.json < environment.

Every layer is validated on its own so that an error names the file (or the environment
variable) it came from, the field, and what was expected. `load_settings` raises
`SettingsError` with a one-line message; the CLI prints it and exits. Never a traceback.

The project layer comes from the working directory, which the sandbox can write: what it
would widen (start processes, approve, reach hosts, redirect data) applies only once the user
trusts the project (co_tui.trust). `read_layers` and `merge_layers` are the pieces it uses.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from co_tui.permissions.rules import RuleError, parse_rule

APP_NAME = "co-tui"
PROJECT_DIR_NAME = ".co-tui"
SETTINGS_FILE_NAME = "settings.json"


def user_config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


class SettingsError(Exception):
    """A settings file or value is malformed. The message is one line, ready to print."""


class WebPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    search: Literal["allow", "ask", "deny"] = "allow"
    fetch: Literal["allow", "ask", "deny"] = "allow"


class MCPServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    approval: Literal["auto", "never"] = "auto"
    # The server sends nothing off this machine: its calls are not outbound for the egress
    # guard (its results still count as untrusted).
    local: bool = False


def _permission_rule(text: str) -> str:
    try:
        parse_rule(text)
    except RuleError as exc:  # the error names the field; the input (the rule) is appended
        why = {"why": str(exc)}
        raise PydanticCustomError("permission_rule", "bad permission rule: {why}", why) from None
    return text.strip()


PermissionRuleText = Annotated[str, AfterValidator(_permission_rule)]


class Permissions(BaseModel):
    """Permission rules (grammar in permissions/rules.py): deny wins, then ask, then allow."""

    model_config = ConfigDict(extra="forbid")
    allow: list[PermissionRuleText] = Field(default_factory=list)
    ask: list[PermissionRuleText] = Field(default_factory=list)
    deny: list[PermissionRuleText] = Field(default_factory=list)


# Run without asking (only in an isolating sandbox, read-only) when the arguments pass the
# per-program rules in orchestrator/readonly.py; entries may name a git subcommand.
DEFAULT_SAFE_COMMANDS = [
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "pwd",
    "echo",
    "grep",
    "rg",
    "date",
    "whoami",
    "uname",
    "tree",
    "file",
    "stat",
    "du",
    "df",
    "which",
    "git status",
    "git log",
    "git diff",
    "git show",
    "git branch",
]


class Settings(BaseModel):
    """Every setting co-tui reads. Field names are the keys of settings.json."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # --- LLM ---
    llm_provider: str = ""  # "" = automatic: gemini when a key is set, else the local model
    model: str = ""  # any pydantic-ai model string; overrides llm_provider ("test" = TestModel)
    gemini_api_key: str | None = None
    gemini_model: str = "gemini-2.5-flash"
    ollama_host: str = "http://localhost:11434"
    ollama_model: str = "qwen3:4b"
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    openai_model: str = "gpt-4o-mini"
    local_model_path: str | None = None
    local_n_ctx: int = Field(default=4096, ge=512)
    local_threads: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)

    # --- Agent loop ---
    personality: str = "finch"
    tool_retries: int = Field(default=3, ge=0)
    max_request_limit: int = Field(default=25, ge=1)
    model_http_retries: int = Field(default=2, ge=0)
    auto_confirm: bool = False
    verbose: bool = False

    # --- History ---
    max_history_messages: int = Field(default=40, ge=4)
    tool_output_trim_chars: int = Field(default=2000, ge=100)
    summarization_model: str = ""

    # --- Sandbox ---
    sandbox_backend: Literal["auto", "docker", "bwrap", "subprocess"] = "auto"
    docker_image: str = "co-tui-sandbox"
    sandbox_max_timeout: int = Field(default=600, ge=1)
    sandbox_network: Literal["none", "bridge"] = "none"
    sandbox_mem_limit: str = "1g"
    sandbox_cpus: float = Field(default=1, gt=0)
    shell_safe_commands: list[str] = Field(default_factory=lambda: list(DEFAULT_SAFE_COMMANDS))
    shell_output_limit: int = Field(default=100_000, ge=1000)
    permissions: Permissions = Field(default_factory=Permissions)

    # --- Integrations ---
    obsidian_vault_path: str | None = None
    slack_bot_token: str | None = None
    google_credentials_path: str | None = None
    brave_search_api_key: str | None = None
    web_policy: WebPolicy = Field(default_factory=WebPolicy)
    web_fetch_allowed_domains: list[str] = Field(default_factory=list)
    web_fetch_blocked_domains: list[str] = Field(default_factory=list)
    # Exact host names / IP literals web_fetch may reach at loopback, private or link-local
    # addresses (every other host is refused there, also via redirects and DNS).
    web_fetch_private_hosts: list[str] = Field(default_factory=list)
    brave_search_base_url: str = "https://api.search.brave.com/res/v1"
    mcp_servers: dict[str, MCPServerConfig] = Field(default_factory=dict)

    # --- Memory ---
    memory_max_count: int = Field(default=200, ge=1)
    memory_dedup_window_days: int = Field(default=7, ge=0)
    memory_dedup_threshold: int = Field(default=85, ge=0, le=100)
    memory_decay_strategy: Literal["summarize", "cut"] = "summarize"
    memory_decay_percentage: float = Field(default=0.2, gt=0, le=1)

    # --- UI and telemetry ---
    theme: str = "textual-dark"
    telemetry_enabled: bool = True

    def secret_values(self) -> list[str]:
        """Every configured secret, for redaction."""
        values = [
            self.gemini_api_key,
            self.openai_api_key,
            self.slack_bot_token,
            self.brave_search_api_key,
        ]
        for server in self.mcp_servers.values():
            values.extend(server.env.values())
        return [v for v in values if v and len(v) >= 4]


# Environment variables that keep the names other tools use; everything else is CO_TUI_<FIELD>.
ENV_NAMES: dict[str, str] = {
    "llm_provider": "LLM_PROVIDER",
    "gemini_api_key": "GEMINI_API_KEY",
    "gemini_model": "GEMINI_MODEL",
    "ollama_host": "OLLAMA_HOST",
    "ollama_model": "OLLAMA_MODEL",
    "openai_base_url": "OPENAI_BASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "obsidian_vault_path": "OBSIDIAN_VAULT_PATH",
    "slack_bot_token": "SLACK_BOT_TOKEN",
    "google_credentials_path": "GOOGLE_CREDENTIALS_PATH",
    "brave_search_api_key": "BRAVE_SEARCH_API_KEY",
}


def env_name(field: str) -> str:
    return ENV_NAMES.get(field, f"CO_TUI_{field.upper()}")


def _env_value(field: str, raw: str) -> Any:
    """Environment values are strings; structured fields accept JSON, lists also a, b, c."""
    annotation = str(Settings.model_fields[field].annotation)
    structured = any(t in annotation for t in ("list", "dict", "WebPolicy"))
    if not structured:
        return raw
    stripped = raw.strip()
    if stripped.startswith(("[", "{")):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise SettingsError(
                f"settings error: environment variable {env_name(field)}: "
                f"invalid JSON ({exc.msg} at column {exc.colno})"
            ) from None
    if "list" in annotation:
        return [part.strip() for part in stripped.split(",") if part.strip()]
    return raw


def _read_json_file(path: Path) -> tuple[dict[str, Any], bytes]:
    """The file's settings object and the exact bytes it was parsed from."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SettingsError(f"settings error: {path}: cannot read ({exc.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SettingsError(f"settings error: {path}: not UTF-8 text") from None
    if not text.strip():
        return {}, data
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"settings error: {path}: invalid JSON at line {exc.lineno} column {exc.colno}: "
            f"{exc.msg}"
        ) from None
    if not isinstance(parsed, dict):
        raise SettingsError(
            f"settings error: {path}: expected a JSON object of settings, "
            f"got {type(parsed).__name__}"
        )
    return parsed, data


def _describe_error(err: Mapping[str, Any]) -> tuple[str, str]:
    loc = ".".join(str(part) for part in err.get("loc", ()))
    msg = str(err.get("msg", "invalid value"))
    if err.get("type") == "extra_forbidden":
        top = str(err["loc"][0]) if err.get("loc") else loc
        close = difflib.get_close_matches(top, list(Settings.model_fields), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close and len(err["loc"]) == 1 else ""
        return loc, f"unknown setting{hint}"
    given = err.get("input")
    if given is not None and not isinstance(given, dict | list):
        msg = f"{msg[0].lower()}{msg[1:]}, got {given!r}"
    return loc, msg


def _validate_layer(merged: dict[str, Any], source: str, layer_keys: set[str]) -> Settings:
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        errors = exc.errors()
        # Prefer an error in a key this layer set: that is the layer at fault.
        ours = [e for e in errors if e.get("loc") and str(e["loc"][0]) in layer_keys]
        err = (ours or errors)[0]
        loc, msg = _describe_error(err)
        where = source
        if source == "environment" and err.get("loc"):
            where = f"environment variable {env_name(str(err['loc'][0]))}"
            loc_label = ""
        else:
            loc_label = f" field '{loc}':"
        raise SettingsError(f"settings error: {where}:{loc_label} {msg}") from None


def project_settings_path(cwd: Path) -> Path:
    return cwd / PROJECT_DIR_NAME / SETTINGS_FILE_NAME


def user_settings_path() -> Path:
    return user_config_dir() / SETTINGS_FILE_NAME


LayerKind = Literal["user", "project", "environment", "command line"]


@dataclass(frozen=True)
class SettingsLayer:
    """One source of settings, as written. `source` names it in error messages."""

    kind: LayerKind
    source: str  # the file, "environment" or "command line"
    values: dict[str, Any]
    sha256: str = ""  # of the file's bytes, for the layers read from a file


def read_layers(
    cwd: Path,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> list[SettingsLayer]:
    """Every layer that is present, lowest precedence first (nothing validated yet)."""
    env = os.environ if env is None else env
    layers: list[SettingsLayer] = []
    files: tuple[tuple[LayerKind, Path], ...] = (
        ("user", user_settings_path()),
        ("project", project_settings_path(cwd)),
    )
    for kind, path in files:
        if path.is_file():
            values, data = _read_json_file(path)
            digest = hashlib.sha256(data).hexdigest()
            layers.append(SettingsLayer(kind, str(path), values, digest))
    env_layer = {
        field: _env_value(field, env[env_name(field)])
        for field in Settings.model_fields
        if env.get(env_name(field)) not in (None, "")
    }
    if env_layer:
        layers.append(SettingsLayer("environment", "environment", env_layer))
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    if given:
        layers.append(SettingsLayer("command line", "command line", given))
    return layers


def merge_layers(layers: Iterable[SettingsLayer]) -> Settings:
    """Later layers replace earlier ones key by key; each is validated as it is added, so an
    error names the layer at fault."""
    merged: dict[str, Any] = {}
    settings = Settings()
    for layer in layers:
        merged |= layer.values
        settings = _validate_layer(merged, layer.source, set(layer.values))
    return settings


def load_settings(
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Build Settings from every layer, the project's only as far as the user trusts it
    (co_tui.trust.load_project_settings has the details); raises SettingsError with a
    one-line message."""
    from co_tui.trust import load_project_settings

    return load_project_settings(cwd or Path.cwd(), env=env, overrides=overrides).settings
