"""Settings: defaults < user settings.json < project .co-tui/settings.json < environment
(< command line).

`Settings` is a pydantic-settings `BaseSettings`; each layer is a settings source
(`SettingsLayer`: `SettingsFileSource` for the two files, `EnvironmentSource`). Objects merge
key by key across the layers, nested ones included: a project's
`{"web_policy": {"fetch": "deny"}}` keeps the user's `"search"`. Lists and plain values
replace.

Every layer is validated on its own as it is read, so an error names the file (or the
environment variable) it came from, the field, and what was expected. `SettingsError` has a
one-line message; the CLI prints it and exits. Never a traceback.

`Settings(...)` is the defaults and its keyword arguments: it reads no file and no environment
variable. The layers come in through `read_layers` and `merge_layers`, which
co_tui.config.trust uses (`co_tui.config.trust.load_settings`): the project layer comes from
the working directory, which the sandbox can write, and what it would widen applies only once
the user trusts the project.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import stat
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
)
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from co_tui.config.paths import (
    project_settings_path,
    user_credentials_path,
    user_settings_path,
)
from co_tui.permissions.rules import RuleError, parse_rule
from co_tui.safety.safe_read import read_open_file

ENV_PREFIX = "CO_TUI_"
MAX_SETTINGS_BYTES = 256_000


# The engines that can serve the embedded model (co_tui/llm/local/engines.py).
LocalEngineName = Literal["xllamacpp", "llama-cpp-python"]


class SettingsError(Exception):
    """A settings file or value is malformed. The message is one line, ready to print."""


# Mutable defaults are written as values: pydantic copies them for every instance, and a
# default_factory costs an inspect.signature() of it when the class is made (start-up time).
class WebPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    search: Literal["allow", "ask", "deny"] = "allow"
    fetch: Literal["allow", "ask", "deny"] = "allow"


class MCPServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str
    args: list[str] = []
    env: dict[str, str] = Field(default={}, repr=False)  # may hold secrets
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
    allow: list[PermissionRuleText] = []
    ask: list[PermissionRuleText] = []
    deny: list[PermissionRuleText] = []


# Run without asking (only in an isolating sandbox, read-only) when the arguments pass the
# per-program rules in policy/readonly.py; entries may name a git subcommand.
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


# The layers `merge_layers` is building Settings from, highest precedence first.
_merging: ContextVar[tuple[SettingsLayer, ...]] = ContextVar("co_tui_settings_layers", default=())


class Settings(BaseSettings):
    """Every setting co-tui reads. Field names are the keys of settings.json; a validation
    alias is an environment variable other tools share (besides CO_TUI_<FIELD>)."""

    model_config = SettingsConfigDict(
        extra="forbid",
        validate_assignment=True,
        validate_by_name=True,
        env_prefix=ENV_PREFIX,
    )

    # --- LLM ---
    # "" = automatic: gemini when a key is set, else the local model
    llm_provider: str = Field(default="", validation_alias=AliasChoices("LLM_PROVIDER"))
    model: str = ""  # any pydantic-ai model string; overrides llm_provider ("test" = TestModel)
    gemini_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GEMINI_API_KEY")
    )
    gemini_model: str = Field(
        default="gemini-2.5-flash", validation_alias=AliasChoices("GEMINI_MODEL")
    )
    ollama_host: str = Field(
        default="http://localhost:11434", validation_alias=AliasChoices("OLLAMA_HOST")
    )
    ollama_model: str = Field(default="qwen3:4b", validation_alias=AliasChoices("OLLAMA_MODEL"))
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL")
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY")
    )
    openai_model: str = "gpt-4o-mini"
    local_model_path: str | None = None  # a GGUF file; wins over local_model
    local_model: str | None = None  # a catalog name, downloaded by `co-tui model pull NAME`
    # A mirror's base URL that keeps each file's path: `co-tui model pull` downloads from
    # there instead of the file's public home.
    local_model_mirror: str | None = None
    local_n_ctx: int = Field(default=4096, ge=512)
    local_threads: int | None = Field(default=None, ge=1)
    # What serves it: llama.cpp from a prebuilt wheel, or llama-cpp-python if you installed
    # it (docs/local-model.md#engines).
    local_engine: LocalEngineName = "xllamacpp"
    # Who picks the embedded model's tool: the model among retrieval's shortlist, retrieval's
    # first candidate alone, or a random pick (the eval's floor); "auto" is retrieval for
    # SmolLM2-135M (its own pick measured no better) and the model for others. See
    # docs/local-model.md.
    local_tool_choice: Literal["auto", "model", "retrieval", "random"] = "auto"
    temperature: float | None = Field(default=None, ge=0, le=2)
    # The model's context window in tokens, for the status bar's meter; unset: what the
    # embedded model's n_ctx or the model's profile (genai-prices) says.
    context_window: int | None = Field(default=None, ge=512)

    # --- Agent loop ---
    personality: str = "finch"
    tool_retries: int = Field(default=3, ge=0)
    max_request_limit: int = Field(default=25, ge=1)
    model_http_retries: int = Field(default=2, ge=0)
    # Seconds to connect to a remote provider, and that it may stay silent while it owes an
    # answer (between stream events); either counts as a network error (retried).
    provider_connect_timeout: float = Field(default=10, gt=0)
    provider_idle_timeout: float = Field(default=50, gt=0)
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
    shell_safe_commands: list[str] = list(DEFAULT_SAFE_COMMANDS)
    shell_output_limit: int = Field(default=100_000, ge=1000)
    permissions: Permissions = Permissions()

    # --- Integrations ---
    obsidian_vault_path: str | None = Field(
        default=None, validation_alias=AliasChoices("OBSIDIAN_VAULT_PATH")
    )
    slack_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN")
    )
    google_credentials_path: str | None = Field(
        default=None, validation_alias=AliasChoices("GOOGLE_CREDENTIALS_PATH")
    )
    brave_search_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("BRAVE_SEARCH_API_KEY")
    )
    web_policy: WebPolicy = WebPolicy()
    web_fetch_allowed_domains: list[str] = []
    web_fetch_blocked_domains: list[str] = []
    # Exact host names / IP literals web_fetch may reach at loopback, private or link-local
    # addresses (every other host is refused there, also via redirects and DNS).
    web_fetch_private_hosts: list[str] = []
    brave_search_base_url: str = "https://api.search.brave.com/res/v1"
    mcp_servers: dict[str, MCPServerConfig] = {}

    # --- Memory ---
    memory_max_count: int = Field(default=200, ge=1)
    memory_dedup_window_days: int = Field(default=7, ge=0)
    memory_dedup_threshold: int = Field(default=85, ge=0, le=100)
    memory_decay_strategy: Literal["summarize", "cut"] = "summarize"
    memory_decay_percentage: float = Field(default=0.2, gt=0, le=1)

    # --- UI and telemetry ---
    theme: str = "textual-dark"
    telemetry_enabled: bool = True
    # While the terminal is not focused: OSC 9/777 and the bell when an approval waits or a
    # turn that ran at least notify_after_s seconds ends (co_tui/tui/terminal/notify.py).
    notifications: bool = True
    notify_after_s: float = Field(default=10, ge=0)

    # --- Jobs ---
    # The model scheduled jobs and briefings run on: "local" (the embedded model), "same"
    # (the model configured above), or a model string as for `model`.
    jobs_model: str = "local"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keyword arguments, then the layers `merge_layers` is merging (command line,
        environment, project file, user file), then the defaults. Outside `merge_layers` no
        file and no environment variable is read: which layers apply is co_tui.config.trust's
        call."""
        return (init_settings, *_merging.get())

    def secret_values(self) -> list[str]:
        """Every configured secret, for redaction."""
        values = [
            value.get_secret_value()
            for name in type(self).model_fields
            if isinstance(value := getattr(self, name), SecretStr)
        ]
        for server in self.mcp_servers.values():
            values.extend(server.env.values())
        return [v for v in values if len(v) >= 4]


def env_names(field: str) -> list[str]:
    """The environment variables a setting is read from, the first one set winning:
    CO_TUI_<FIELD>, then the name other tools share (the field's validation alias)."""
    alias = Settings.model_fields[field].validation_alias
    shared = alias.choices if isinstance(alias, AliasChoices) else []
    own = f"{Settings.model_config['env_prefix']}{field.upper()}"
    return [own, *(name for name in shared if isinstance(name, str))]


LayerKind = Literal["user", "project", "environment", "command line"]


class SettingsLayer(PydanticBaseSettingsSource):
    """One layer of settings as written, a pydantic-settings source. It is validated on its
    own when made, so an error names this layer (`origin`), not the merged result."""

    def __init__(
        self,
        kind: LayerKind,
        origin: str,
        values: Mapping[str, Any],
        *,
        sha256: str = "",
        variables: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(Settings)
        self.kind = kind
        self.origin = origin  # the file, "environment" or "command line"
        self.values = dict(values)
        self.sha256 = sha256  # of the file's bytes, for the layers read from a file
        self.variables = dict(variables or {})  # setting -> the environment variable it came from
        _validate_layer(self)

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.values)

    def __repr__(self) -> str:  # the values may be secrets
        return f"{type(self).__name__}({self.kind!r}, {self.origin!r})"

    def with_values(self, values: Mapping[str, Any]) -> SettingsLayer:
        """The same layer holding other values (validated in turn)."""
        return SettingsLayer(
            self.kind, self.origin, values, sha256=self.sha256, variables=self.variables
        )


class SettingsFileSource(SettingsLayer):
    """A settings.json file, the user's or the project's, from the bytes read of it."""

    def __init__(self, kind: LayerKind, path: Path, data: bytes) -> None:
        values = _parse_json_file(path, data)
        super().__init__(kind, str(path), values, sha256=hashlib.sha256(data).hexdigest())


class EnvironmentSource(SettingsLayer):
    """The environment variables of every setting (`env_names`); empty ones are left out."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        values: dict[str, Any] = {}
        variables: dict[str, str] = {}
        for field, info in Settings.model_fields.items():
            name = next((n for n in env_names(field) if environ.get(n)), None)
            if name is not None:
                variables[field] = name
                values[field] = _env_value(info, name, environ[name])
        super().__init__("environment", "environment", values, variables=variables)


def _structured(info: FieldInfo) -> type | None:
    """list or dict for a setting whose value is a list or an object, else None."""
    origin = get_origin(info.annotation) or info.annotation
    if origin in (list, dict):
        return origin
    return dict if isinstance(origin, type) and issubclass(origin, BaseModel) else None


def _env_value(info: FieldInfo, name: str, raw: str) -> Any:
    """Environment values are strings; structured settings accept JSON, lists also a, b, c."""
    structure = _structured(info)
    if structure is None:
        return raw
    stripped = raw.strip()
    if stripped.startswith(("[", "{")):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise SettingsError(
                f"settings error: environment variable {name}: "
                f"invalid JSON ({exc.msg} at column {exc.colno})"
            ) from None
    if structure is list:
        return [part.strip() for part in stripped.split(",") if part.strip()]
    return raw


def _parse_json_file(path: Path, data: bytes) -> dict[str, Any]:
    """The settings object in a file's bytes."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SettingsError(f"settings error: {path}: not UTF-8 text; save it as UTF-8") from None
    if not text.strip():
        return {}
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
    return parsed


def read_user_settings_file(path: Path, *, follow_link: bool = True) -> bytes | None:
    """The bytes of the user's settings file; None when there is none. The user's own
    folder may hold a link to it (a dotfiles manager): it is followed, but what it reaches
    must be a regular file (a FIFO would hang, a device never end) under MAX_SETTINGS_BYTES.
    One that is there but cannot be read is an error, never skipped: co-tui would run with
    settings other than the ones the user wrote. `follow_link=False` (the credentials file,
    which only co-tui writes): a link there is an error."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    if not follow_link:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if not follow_link and path.is_symlink():
            raise SettingsError(
                f"settings error: {path} is a symbolic link; co-tui reads keys only from a "
                "file of its own there (remove the link, then run `co-tui init` again)"
            ) from None
        raise _unreadable(path, exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise _a_folder(path)
        if not stat.S_ISREG(mode):
            raise SettingsError(
                f"settings error: {path} is not a regular file (a FIFO, device or socket); "
                "settings are one JSON file"
            )
        data = read_open_file(fd, MAX_SETTINGS_BYTES)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    finally:
        os.close(fd)
    if len(data) > MAX_SETTINGS_BYTES:
        raise SettingsError(f"settings error: {path} is larger than {MAX_SETTINGS_BYTES:,} bytes")
    return data


def _a_folder(path: Path) -> SettingsError:
    return SettingsError(
        f"settings error: {path} is a folder, not a settings file; move it away (settings are "
        "one JSON file)"
    )


def _unreadable(path: Path, exc: OSError) -> SettingsError:
    """One line naming what stands in the way of reading the settings file, and what to do."""
    if isinstance(exc, IsADirectoryError):
        return _a_folder(path)
    if isinstance(exc, NotADirectoryError):
        in_the_way = next((p for p in path.parents if p.is_file()), path.parent)
        return SettingsError(
            f"settings error: {in_the_way} is a file where the folder holding {path.name} "
            "should be; move it away"
        )
    if isinstance(exc, PermissionError):
        closed = next((p for p in reversed(path.parents) if not os.access(p, os.X_OK)), None)
        if closed is not None:
            return SettingsError(
                f"settings error: cannot read {path}: this user cannot enter the folder "
                f"{closed}; give your user access to it (it should be yours)"
            )
        return SettingsError(
            f"settings error: {path}: cannot read ({exc.strerror}); make it readable by your "
            "user (it should be yours)"
        )
    return SettingsError(f"settings error: {path}: cannot read ({exc.strerror or exc})")


def _unknown_setting(loc: tuple[str | int, ...]) -> str:
    close = difflib.get_close_matches(str(loc[0]), list(Settings.model_fields), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close and len(loc) == 1 else ""
    return f"unknown setting{hint}"


def _is_secret(field: str) -> bool:
    info = Settings.model_fields.get(field)
    return info is not None and SecretStr in get_args(info.annotation)


def _describe_error(err: ErrorDetails) -> str:
    loc = err["loc"]
    if err["type"] == "extra_forbidden":
        return _unknown_setting(loc)
    msg = err["msg"]
    given = err.get("input")
    if given is None or isinstance(given, dict | list):
        return msg
    msg = f"{msg[0].lower()}{msg[1:]}"
    return msg if loc and _is_secret(str(loc[0])) else f"{msg}, got {given!r}"


def _layer_error(layer: SettingsLayer, loc: tuple[str | int, ...], msg: str) -> SettingsError:
    variable = layer.variables.get(str(loc[0])) if loc else None
    where = f"environment variable {variable}" if variable else layer.origin
    # A variable names its setting; a field inside the setting still needs naming.
    named = len(loc) > (1 if variable else 0)
    label = f" field '{'.'.join(str(part) for part in loc)}':" if named else ""
    return SettingsError(f"settings error: {where}:{label} {msg}")


def _validate_layer(layer: SettingsLayer) -> None:
    """Raise SettingsError naming the layer and the field when the layer, alone, is invalid."""
    # Only field names are keys: the aliases Settings accepts are environment names.
    unknown = [key for key in layer.values if key not in Settings.model_fields]
    if unknown:
        raise _layer_error(layer, (unknown[0],), _unknown_setting((unknown[0],)))
    try:
        Settings.model_validate(layer.values)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise _layer_error(layer, err["loc"], _describe_error(err)) from None


def read_layers(
    cwd: Path,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    project_settings: bytes | None = None,
) -> list[SettingsLayer]:
    """Every layer that is present, lowest precedence first, each one validated on its own:
    the user's file, the keys `co-tui init` saved, the project's (`project_settings`: its
    bytes as read once, by co_tui.config.trust, which decides how far it applies), the
    environment, the command line.
    Raises SettingsError."""
    layers: list[SettingsLayer] = []
    user_file = user_settings_path()
    user_data = read_user_settings_file(user_file)
    if user_data is not None:
        layers.append(SettingsFileSource("user", user_file, user_data))
    credentials_file = user_credentials_path()  # what `co-tui init` saved: over the user's file
    credentials = read_user_settings_file(credentials_file, follow_link=False)
    if credentials is not None:
        layers.append(SettingsFileSource("user", credentials_file, credentials))
    if project_settings is not None:
        layers.append(SettingsFileSource("project", project_settings_path(cwd), project_settings))
    environment = EnvironmentSource(os.environ if env is None else env)
    if environment.values:
        layers.append(environment)
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    if given:
        layers.append(SettingsLayer("command line", "command line", given))
    return layers


def merge_layers(layers: Sequence[SettingsLayer]) -> Settings:
    """Settings from `layers` (lowest precedence first) over the defaults: each later layer
    wins key by key, within nested objects too. Raises SettingsError."""
    token = _merging.set(tuple(reversed(layers)))
    try:
        return Settings()
    except ValidationError as exc:  # every layer is valid alone: blame the last to set it
        err = exc.errors()[0]
        top = str(err["loc"][0]) if err["loc"] else ""
        layer = next((la for la in reversed(layers) if top in la.values), layers[-1])
        raise _layer_error(layer, err["loc"], _describe_error(err)) from None
    finally:
        _merging.reset(token)


def user_settings() -> Settings:
    """The user's own settings (their file, the keys `co-tui init` saved) and the
    environment, never a project's: what a repository must not choose, such as where a model
    download comes from. Raises SettingsError."""
    return merge_layers(read_layers(Path.cwd()))
