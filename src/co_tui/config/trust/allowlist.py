"""What an untrusted project's settings may change: an allowlist, so a new setting waits.

`UNTRUSTED_MAY_SET` names every setting a project's `.co-tui/settings.json` may change
before the user trusts the project, each with its reason:
- `MayNarrow`: the part of the project's value that only narrows applies (a stricter
  web_policy, fewer safe commands, a lower limit); the rest waits (widening.py's checks);
- `Inert`: it changes how co-tui looks, nothing it may do.

Every other setting waits for trust whole, whatever its value: the user's value applies and
the setting is named in the notice. A setting added to co-tui later waits too, until someone
puts it on this list with a reason (tests/security/test_untrusted_settings.py states, for
each one listed, what "no wider" means and checks it with Hypothesis).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from co_tui.config.settings import Settings
from co_tui.config.trust.widening import (
    KIND_ORDER,
    Change,
    Check,
    Widening,
    WideningKind,
    additions,
    allowed_domains,
    held_back,
    larger,
    mcp_servers,
    memory_bytes,
    permissions,
    removals,
    turned_on,
    web_policy,
)


@dataclass(frozen=True)
class MayNarrow:
    """What of the project's value narrows applies; `check` finds the rest."""

    kind: WideningKind
    check: Check
    reason: str


@dataclass(frozen=True)
class Inert:
    """Applies as it is: it changes nothing co-tui may do."""

    reason: str

    def check(self, base: Any, full: Any) -> Change:
        return Change((), full)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _lower(kind: WideningKind, template: str) -> MayNarrow:
    return MayNarrow(kind, larger(template, _number), "a lower limit applies, a higher one waits")


UNTRUSTED_MAY_SET: Mapping[str, MayNarrow | Inert] = {
    "auto_confirm": MayNarrow(
        "approval", turned_on("turn on approve-all", True), "only turning it off applies"
    ),
    "shell_safe_commands": MayNarrow(
        "approval",
        additions("run {values} without asking"),
        "leaving commands out applies, adding one waits",
    ),
    "permissions": MayNarrow(
        "approval", permissions, "added ask and deny rules apply, an added allow rule waits"
    ),
    "web_fetch_private_hosts": MayNarrow(
        "network",
        additions("let web_fetch reach {values} at private addresses"),
        "leaving hosts out applies, adding one waits",
    ),
    "web_fetch_allowed_domains": MayNarrow(
        "network", allowed_domains, "a shorter list of domains applies, a longer one waits"
    ),
    "web_fetch_blocked_domains": MayNarrow(
        "network", removals("unblock {values}"), "blocking more applies, unblocking waits"
    ),
    "web_policy": MayNarrow("network", web_policy, "a stricter policy per tool applies"),
    "sandbox_network": MayNarrow(
        "sandbox",
        turned_on("give the sandbox network access", "bridge"),
        "only `none` applies",
    ),
    "sandbox_mem_limit": MayNarrow(
        "sandbox",
        larger("raise the sandbox memory to {value}", memory_bytes),
        "less memory applies, more waits",
    ),
    "sandbox_cpus": _lower("sandbox", "raise the sandbox CPUs to {value}"),
    "sandbox_max_timeout": _lower("sandbox", "let a command run for up to {value} seconds"),
    "shell_output_limit": _lower("sandbox", "keep up to {value} bytes of a command's output"),
    "max_request_limit": _lower("approval", "allow {value} model requests in one turn"),
    "tool_retries": _lower("approval", "retry a tool call {value} times"),
    "model_http_retries": _lower("data", "retry a failed model request {value} times"),
    "mcp_servers": MayNarrow(
        "process",
        mcp_servers,
        "only servers the user runs apply, never less strictly; any other waits",
    ),
    "theme": Inert("the app's colours: a theme name"),
    "personality": Inert(
        "one of co-tui's own personalities (their text ships with co-tui); any other name "
        "is refused"
    ),
    "verbose": Inert("shows the model's thinking in the transcript, nothing more"),
}


@dataclass(frozen=True)
class Review:
    widenings: tuple[Widening, ...]  # what waits for trust, one line each
    narrowed: dict[str, Any]  # setting -> the value that applies while not trusted


def review_project_settings(base: Settings, full: Settings) -> Review:
    """What of `full` (with the project layer) waits for trust compared with `base`
    (without it), and the values that apply meanwhile."""
    found: list[Widening] = []
    narrowed: dict[str, Any] = {}
    for name in type(base).model_fields:
        before, after = getattr(base, name), getattr(full, name)
        if after == before:
            continue
        rule = UNTRUSTED_MAY_SET.get(name)
        if rule is None:
            narrowed[name] = before
            found += held_back(name, before, after)
            continue
        change = rule.check(before, after)
        if change.widenings:
            narrowed[name] = change.narrowed
            kind = rule.kind if isinstance(rule, MayNarrow) else "setting"
            found += [Widening(name, kind, s, d) for s, d in change.widenings]
    found.sort(key=lambda w: KIND_ORDER.index(w.kind))
    return Review(tuple(found), narrowed)
