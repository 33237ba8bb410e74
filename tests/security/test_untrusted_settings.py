"""Nothing an untrusted project sets widens anything: a Hypothesis property over project
settings files (any setting, any valid value) and the user's own settings (also any).

The settings in effect while the project is not trusted are compared with the user's own,
setting by setting, through `NO_WIDER`: this file's own statement of what "no wider" means
for each setting an untrusted project may change. Every other setting must be exactly the
user's. A setting the code lets an untrusted project change is only accepted once this
table says how it may change (`test_every_setting_an_untrusted_project_may_set_is_stated`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import annotated_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, SecretStr

from co_tui.config.memory_size import docker_memory_bytes
from co_tui.config.paths import user_settings_path
from co_tui.config.settings import MCPServerConfig, Permissions, Settings, WebPolicy
from co_tui.config.trust import load_project_settings
from tests.sizes import examples

RANK = {"deny": 0, "ask": 1, "allow": 2}


def _at_most(a: float | None, b: float | None) -> bool:
    return a == b or (a is not None and b is not None and a <= b)


def _memory(value: str) -> float | None:
    try:
        return docker_memory_bytes(value)
    except ValueError:
        return None


def _same_process(a: MCPServerConfig, b: MCPServerConfig) -> bool:
    return (a.command, a.args, a.env) == (b.command, b.args, b.env)


def _mcp(untrusted: dict[str, MCPServerConfig], base: dict[str, MCPServerConfig]) -> bool:
    for name, server in untrusted.items():
        known = base.get(name)
        if known is None or not _same_process(server, known):
            return False  # a process the user never configured
        if known.approval == "auto" and server.approval != "auto":
            return False
        if server.local and not known.local:
            return False
    return True


def _permissions(untrusted: Permissions, base: Permissions) -> bool:
    return (
        set(untrusted.allow) <= set(base.allow)
        and set(base.ask) <= set(untrusted.ask)
        and set(base.deny) <= set(untrusted.deny)
    )


def _allowed_domains(untrusted: list[str], base: list[str]) -> bool:
    if not base:
        return True  # the user allows every domain: any list narrows
    return bool(untrusted) and set(untrusted) <= set(base)


# setting -> (untrusted value, the user's value) -> whether the first is no wider.
NO_WIDER: dict[str, Callable[[Any, Any], bool]] = {
    "auto_confirm": lambda u, b: b or not u,
    "shell_safe_commands": lambda u, b: set(u) <= set(b),
    "permissions": _permissions,
    "web_fetch_private_hosts": lambda u, b: set(u) <= set(b),
    "web_fetch_allowed_domains": _allowed_domains,
    "web_fetch_blocked_domains": lambda u, b: set(b) <= set(u),
    "web_policy": lambda u, b: all(RANK[getattr(u, t)] <= RANK[getattr(b, t)] for t in RANK_TOOLS),
    "sandbox_network": lambda u, b: u in ("none", b),
    "sandbox_mem_limit": lambda u, b: u == b or _at_most(_memory(u), _memory(b)),
    "sandbox_cpus": _at_most,
    "sandbox_max_timeout": _at_most,
    "shell_output_limit": _at_most,
    "max_request_limit": _at_most,
    "tool_retries": _at_most,
    "model_http_retries": _at_most,
    "mcp_servers": _mcp,
    # Presentation only: any value.
    "theme": lambda u, b: True,
    "personality": lambda u, b: True,
    "verbose": lambda u, b: True,
}
RANK_TOOLS = ("search", "fetch")

# -- values for any setting --------------------------------------------------------------

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-./: ", min_size=1, max_size=12)
entries = st.sampled_from(["ls", "cat", "rm", "git log", "curl", "10.0.0.5", "a.example", "x"])
RULES = [
    "shell(ls *)",
    "shell(rm *)",
    "shell(git status)",
    "web_fetch(domain:a.example)",
    "web_search",
    "post_slack_message",
]
servers = st.builds(
    MCPServerConfig,
    command=st.sampled_from(["npx", "python", "sh"]),
    args=st.lists(st.sampled_from(["-y", "srv", "--root", "."]), max_size=2),
    approval=st.sampled_from(["auto", "never"]),
    local=st.booleans(),
)


def _number(annotation: type, metadata: list[Any]) -> st.SearchStrategy[Any]:
    low: float = 0
    high: float = 10_000_000
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            low = item.ge  # type: ignore[assignment]
        elif isinstance(item, annotated_types.Gt):
            low = item.gt + (1 if annotation is int else 0.001)  # type: ignore[operator]
        elif isinstance(item, annotated_types.Le):
            high = item.le  # type: ignore[assignment]
    if annotation is int:
        return st.integers(min_value=int(low), max_value=int(high))
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


def _model(model: type[BaseModel]) -> st.SearchStrategy[Any]:
    if model is WebPolicy:
        policy = st.sampled_from(list(RANK))
        return st.fixed_dictionaries({}, optional={"search": policy, "fetch": policy})
    if model is Permissions:
        rules = st.lists(st.sampled_from(RULES), max_size=3, unique=True)
        return st.fixed_dictionaries({}, optional={"allow": rules, "ask": rules, "deny": rules})
    raise AssertionError(f"no strategy for {model.__name__}: add one")


def value_for(name: str) -> st.SearchStrategy[Any]:
    """Any valid value of the setting `name`, as a settings file would hold it."""
    if name == "mcp_servers":
        configs = servers.map(lambda c: c.model_dump())
        return st.dictionaries(st.sampled_from(["notes", "docs", "evil"]), configs, max_size=2)
    if name == "sandbox_mem_limit":
        return st.sampled_from(["256m", "1g", "4g", "64g", "bogus"])
    info = Settings.model_fields[name]
    annotation, metadata = info.annotation, info.metadata
    options = [a for a in get_args(annotation) if a is not type(None)]
    optional = type(None) in get_args(annotation)
    base = options[0] if optional and len(options) == 1 else annotation
    if get_origin(base) is Literal:
        strategy: st.SearchStrategy[Any] = st.sampled_from(get_args(base))
    elif base is bool:
        strategy = st.booleans()
    elif base in (int, float):
        strategy = _number(base, metadata)  # type: ignore[arg-type]
    elif base in (str, SecretStr):
        strategy = words if base is str else st.text("abcdefgh0123", min_size=4, max_size=12)
    elif get_origin(base) is list:
        strategy = st.lists(entries, max_size=4)
    elif isinstance(base, type) and issubclass(base, BaseModel):
        strategy = _model(base)
    else:
        raise AssertionError(f"no strategy for {name}: {annotation}")
    return st.none() | strategy if optional else strategy


def layer(names: st.SearchStrategy[list[str]]) -> st.SearchStrategy[dict[str, Any]]:
    return names.flatmap(lambda keys: st.fixed_dictionaries({k: value_for(k) for k in keys}))


ALL = sorted(Settings.model_fields)
some_settings = st.lists(st.sampled_from(ALL), unique=True, max_size=8)


def _effective(user: dict[str, Any], project: dict[str, Any]) -> tuple[Settings, Settings]:
    """(the user's settings, the settings in effect with the untrusted project)."""
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        user_settings_path().parent.mkdir(parents=True, exist_ok=True)
        user_settings_path().write_text(json.dumps(user))
        alone = load_project_settings(workspace).settings
        (workspace / ".co-tui").mkdir()
        (workspace / ".co-tui" / "settings.json").write_text(json.dumps(project))
        return alone, load_project_settings(workspace).settings


@pytest.mark.slow
@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(user=layer(some_settings), project=layer(st.lists(st.sampled_from(ALL), unique=True)))
def test_nothing_an_untrusted_project_sets_widens_anything(
    isolated_env: Path, user: dict[str, Any], project: dict[str, Any]
) -> None:
    base, untrusted = _effective(user, project)
    for name in ALL:
        mine, in_effect = getattr(base, name), getattr(untrusted, name)
        if name in NO_WIDER:
            assert NO_WIDER[name](in_effect, mine), (name, in_effect, mine)
        else:
            assert in_effect == mine, (name, in_effect, mine)


def test_every_setting_an_untrusted_project_may_set_is_stated() -> None:
    from co_tui.config.trust.allowlist import UNTRUSTED_MAY_SET

    assert sorted(set(UNTRUSTED_MAY_SET) - set(NO_WIDER)) == []
    for name, rule in UNTRUSTED_MAY_SET.items():
        assert rule.reason.strip(), f"{name}: an allowed setting says why it may apply"


def test_a_setting_nobody_listed_waits_for_trust(isolated_env: Path) -> None:
    """The settings this issue found applying silently, one by one."""
    held = {
        "memory_max_count": 1,
        "memory_decay_strategy": "cut",
        "memory_decay_percentage": 1.0,
        "memory_dedup_threshold": 0,
        "telemetry_enabled": False,
        "openai_model": "attacker-model",
        "gemini_model": "attacker-model",
        "ollama_model": "attacker-model",
        "notifications": False,
        "local_n_ctx": 1_000_000,
        "tool_output_trim_chars": 1_000_000,
    }
    base, untrusted = _effective({}, held)
    for name in held:
        assert getattr(untrusted, name) == getattr(base, name), name
