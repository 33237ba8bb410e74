"""How to word what a project's settings would change, and what of it may apply untrusted.

Each check compares the value in effect without the project layer (`base`) with the value
with it (`full`) and returns
- the widenings: one line each, for the trust dialog, the notices and /status;
- the narrowed value: the project's value with every widening taken out (a stricter
  web_policy, fewer safe commands, lower limits stay).

Which settings an untrusted project may set at all is co_tui.config.trust.allowlist's decision;
this module only knows how to compare and word them. `HELD_WORDING` words the settings that
wait for trust whole (where data goes, what starts), better than the generic line.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from co_tui.config.settings import MCPServerConfig, Permissions, WebPolicy

WideningKind = Literal["process", "approval", "network", "sandbox", "data", "setting"]
KIND_ORDER: tuple[WideningKind, ...] = (
    "process",
    "approval",
    "network",
    "sandbox",
    "data",
    "setting",
)

FEW = 3  # values named in a summary; the detail lists them all
SHORT = 40  # characters of one value in a summary; the detail has it whole


@dataclass(frozen=True)
class Widening:
    """One thing the project settings would enable that the user's settings do not."""

    setting: str  # the settings.json key
    kind: WideningKind
    summary: str  # a verb phrase that follows "would": "start the MCP server `x`"
    detail: str = ""  # the whole value behind it: "`python server.py --port 1`"

    def line(self) -> str:
        return f"would {self.summary}" + (f": {self.detail}" if self.detail else "")


@dataclass(frozen=True)
class Change:
    """A check's answer: (summary, detail) for each widening, and the value to apply while
    the project is not trusted."""

    widenings: tuple[tuple[str, str], ...]
    narrowed: Any


Check = Callable[[Any, Any], Change]


@dataclass(frozen=True)
class FieldCheck:
    setting: str
    kind: WideningKind
    check: Check


# -- wording --
def _short(value: str) -> str:
    return value if len(value) <= SHORT else value[: SHORT - 1] + "…"


def _quoted(values: Sequence[str], *, short: bool) -> list[str]:
    return [f"`{_short(v) if short else v}`" for v in values]


def join_words(words: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _few(values: Sequence[str]) -> str:
    """Up to FEW values, quoted and shortened, then how many more."""
    named = _quoted(values[:FEW], short=True)
    if len(values) > FEW:
        named.append(f"{len(values) - FEW} more")
    return join_words(named)


def _all(values: Sequence[str]) -> str:
    """Every value, whole: the detail of a summary that could not name them all."""
    shortened = len(values) > FEW or any(len(v) > SHORT for v in values)
    return ", ".join(_quoted(values, short=False)) if shortened else ""


def _listing(template: str, values: Sequence[str]) -> tuple[str, str]:
    return template.format(values=_few(values)), _all(values)


# -- generic checks --
def _unchanged(base: Any, full: Any) -> Change:
    return Change((), full)


def any_change(template: str, empty: str = "") -> Check:
    """Any other value widens (data would go elsewhere, the sandbox would differ): the base
    value applies untrusted. `template` has {value}; `empty` words a value set to nothing."""

    def check(base: Any, full: Any) -> Change:
        if full == base:
            return _unchanged(base, full)
        if full in (None, ""):
            return Change(((empty or "clear a setting the user made", ""),), base)
        value = str(full)
        return Change(((template.format(value=f"`{_short(value)}`"), _all([value])),), base)

    return check


def secret_change(what: str) -> Check:
    """A credential from the project sends data to the account that owns it. Never shown."""

    def check(base: Any, full: Any) -> Change:
        if full == base:
            return Change((), full)
        if not full:  # None, or an empty SecretStr
            return Change(((f"clear your {what}", ""),), base)
        return Change(((f"use this project's {what}", ""),), base)

    return check


def _norm(entry: str) -> str:
    return entry.strip()  # any other difference may mean something else: compared as is


def additions(template: str) -> Check:
    """A list whose entries grant something: entries the base does not have widen; the
    narrowed list keeps the project's entries the base has (dropping some only narrows)."""

    def check(base: list[str], full: list[str]) -> Change:
        known = {_norm(v) for v in base}
        added = [v for v in full if _norm(v) not in known]
        if not added:
            return _unchanged(base, full)
        kept = [v for v in full if _norm(v) in known]
        return Change((_listing(template, added),), kept)

    return check


def removals(template: str) -> Check:
    """A list whose entries take something away (blocked domains): entries of the base the
    project leaves out widen; the narrowed list is the project's plus the base's."""

    def check(base: list[str], full: list[str]) -> Change:
        present = {_norm(v) for v in full}
        removed = [v for v in base if _norm(v) not in present]
        if not removed:
            return _unchanged(base, full)
        return Change((_listing(template, removed),), [*full, *removed])

    return check


def larger(template: str, size: Callable[[Any], float | None]) -> Check:
    """A limit: a larger one widens (the base applies), a lower one applies. A value `size`
    cannot read counts as larger."""

    def check(base: Any, full: Any) -> Change:
        b, f = size(base), size(full)
        if full == base or (b is not None and f is not None and f <= b):
            return _unchanged(base, full)
        return Change(((template.format(value=f"`{_short(str(full))}`"), ""),), base)

    return check


def turned_on(summary: str, on: object) -> Check:
    """A switch: turning it to `on` widens; the other direction applies."""

    def check(base: Any, full: Any) -> Change:
        if full == on and base != on:
            return Change(((summary, ""),), base)
        return _unchanged(base, full)

    return check


# -- the settings that need their own check --
def memory_bytes(value: str) -> float | None:
    """Docker's memory limit notation ("512m", "1g") in bytes, as the sandbox reads it;
    None when it is not one."""
    from co_tui.config.memory_size import docker_memory_bytes

    try:
        return docker_memory_bytes(value)
    except ValueError:
        return None


def _mcp_command(config: MCPServerConfig) -> str:
    shown = f"`{shlex.join([config.command, *config.args])}`"
    if config.env:  # the names only: the values may be secrets
        shown += f" with the environment variables {', '.join(sorted(config.env))}"
    return shown


# How a server runs its calls, not which process it is: compared one by one below.
_MCP_CALL_FIELDS = {"approval", "local"}


def _same_process(a: MCPServerConfig, b: MCPServerConfig) -> bool:
    fields = set(MCPServerConfig.model_fields) - _MCP_CALL_FIELDS
    return all(getattr(a, f) == getattr(b, f) for f in fields)


def mcp_servers(base: dict[str, MCPServerConfig], full: dict[str, MCPServerConfig]) -> Change:
    """A server the base does not run as the same process (command, arguments, environment)
    would start on this machine; for one it does, calls the base approves would run without
    asking, and calls the base checks as outbound would not be (`local`). Untrusted, only the
    project's servers the base runs remain, each with the stricter value of the two."""
    found: list[tuple[str, str]] = []
    kept: dict[str, MCPServerConfig] = {}
    for name, config in full.items():
        known = base.get(name)
        shown = f"`{_short(name)}`"
        if known is None or not _same_process(known, config):
            summary = f"start the MCP server {shown}"
            if config.approval == "never":
                summary += " (its tools run without asking)"
            found.append((summary, _mcp_command(config)))
            continue
        if config.approval == "never" and known.approval == "auto":
            found.append((f"run the tools of the MCP server {shown} without asking", ""))
        if config.local and not known.local:
            found.append((f"treat the MCP server {shown} as local (its calls not outbound)", ""))
        stricter = {
            "approval": "auto" if "auto" in (config.approval, known.approval) else "never",
            "local": config.local and known.local,
        }
        kept[name] = config.model_copy(update=stricter)
    return Change(tuple(found), kept if found else full)


_POLICY_RANK = {"deny": 0, "ask": 1, "allow": 2}


def web_policy(base: WebPolicy, full: WebPolicy) -> Change:
    """Per tool: a more permissive policy widens; the stricter of the two applies."""
    found: list[tuple[str, str]] = []
    narrowed: dict[str, Literal["allow", "ask", "deny"]] = {}
    for tool in ("search", "fetch"):
        b, f = getattr(base, tool), getattr(full, tool)
        if _POLICY_RANK[f] > _POLICY_RANK[b]:
            found.append((f"set web {tool} to `{f}` (the user's settings say `{b}`)", ""))
        narrowed[tool] = f if _POLICY_RANK[f] <= _POLICY_RANK[b] else b
    return Change(tuple(found), WebPolicy(**narrowed) if found else full)


def allowed_domains(base: list[str], full: list[str]) -> Change:
    """An empty list allows every domain: emptying the base's list widens to all of them;
    a list where the base had none narrows; entries added to the base's list widen."""
    if not base:
        return _unchanged(base, full)
    if not full:
        return Change((("let web_fetch reach every domain", ""),), base)
    change = additions("let web_fetch reach {values}")(base, full)
    if change.widenings and not change.narrowed:
        return Change(change.widenings, base)  # nothing left would mean every domain
    return change


_RULE_LISTS = (("allow", "widen"), ("ask", "narrow"), ("deny", "narrow"))


def permissions(base: Permissions, full: Permissions) -> Change:
    """Permission rules ({allow, ask, deny} lists): an allow rule the base does not have
    widens, and so does leaving out an ask or deny rule of the base."""
    found: list[tuple[str, str]] = []
    narrowed: dict[str, list[str]] = {}
    for rules, direction in _RULE_LISTS:
        b, f = list(getattr(base, rules)), list(getattr(full, rules))
        if direction == "widen":
            change = additions(f"allow {{values}} without asking (permissions.{rules})")(b, f)
        else:
            change = removals(f"drop the rules {{values}} (permissions.{rules})")(b, f)
        found.extend(change.widenings)
        narrowed[rules] = change.narrowed
    return Change(tuple(found), full.model_copy(update=narrowed) if found else full)


def held_whole(template: str, empty: str = "") -> Check:
    """A setting that waits for trust whole: any other value is held back (the base value
    applies untrusted). `template` has {value}."""
    return any_change(template, empty)


# The settings that wait for trust whole and have words of their own.
HELD_WORDING: tuple[FieldCheck, ...] = (
    FieldCheck("local_model_path", "process", held_whole("load the model file {value}")),
    FieldCheck("local_model", "process", held_whole("load the downloaded model {value}")),
    FieldCheck("local_model_mirror", "process", held_whole("download model files from {value}")),
    FieldCheck("llm_provider", "data", held_whole("use the provider {value}")),
    FieldCheck("model", "data", held_whole("use the model {value}")),
    FieldCheck("summarization_model", "data", held_whole("summarize with the model {value}")),
    FieldCheck("openai_base_url", "data", held_whole("send model requests to {value}")),
    FieldCheck("ollama_host", "data", held_whole("send model requests to {value}")),
    FieldCheck("brave_search_base_url", "data", held_whole("send web searches to {value}")),
    FieldCheck(
        "google_credentials_path", "data", held_whole("read Google credentials from {value}")
    ),
    FieldCheck("obsidian_vault_path", "data", held_whole("use {value} as the Obsidian vault")),
    FieldCheck("gemini_api_key", "data", secret_change("Gemini API key")),
    FieldCheck("openai_api_key", "data", secret_change("OpenAI API key")),
    FieldCheck("slack_bot_token", "data", secret_change("Slack bot token")),
    FieldCheck("brave_search_api_key", "data", secret_change("Brave Search API key")),
    FieldCheck("sandbox_backend", "sandbox", held_whole("switch the sandbox to {value}")),
    FieldCheck("docker_image", "sandbox", held_whole("run commands in the Docker image {value}")),
)
HELD_BY_NAME = {check.setting: check for check in HELD_WORDING}


def _is_secret(value: Any) -> bool:
    return type(value).__name__ == "SecretStr"


def held_back(setting: str, base: Any, full: Any) -> list[Widening]:
    """What a setting held back whole would do: its own words, else generic ones naming
    the setting and the value (a secret never shown)."""
    wording = HELD_BY_NAME.get(setting)
    if wording is not None:
        lines = wording.check(base, full).widenings
        return [Widening(setting, wording.kind, s, d) for s, d in lines]
    if _is_secret(full) or _is_secret(base):
        return [Widening(setting, "setting", f"set `{setting}` (a secret)")]
    shown = full.model_dump() if hasattr(full, "model_dump") else full
    value = shown if isinstance(shown, str) else json.dumps(shown, default=str)
    return [Widening(setting, "setting", f"set `{setting}` to `{_short(value)}`", _all([value]))]


def summary_sentence(widenings: Sequence[Widening]) -> str:
    """'start the MCP server `x` and turn on approve-all': one clause per widening."""
    return join_words([w.summary for w in widenings])
