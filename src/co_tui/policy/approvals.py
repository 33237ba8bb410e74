"""Which deferred calls need the user, and what the user decided.

The user's permission rules (permissions/) come first: a deny rule denies without asking
(also under approve-all), an ask rule asks, an allow rule runs the call (a command in the
normal sandbox). Otherwise a command the read-only classifier (readonly.py) accepts is
approved without asking, only inside an isolating sandbox, and runs there in a read-only
view of the workspace with no network. A command it refuses is asked about, and the dialog
says why (the option named). What is approved is exactly what runs: approved calls are
resumed with `ToolApproved(override_args=<the args shown>)`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import ToolCallPart

from co_tui.context.tool_calls import tool_args
from co_tui.permissions.matching import ToolCall
from co_tui.permissions.ruleset import PermissionRule, PermissionRules
from co_tui.policy.readonly import ReadOnlyVerdict, classify_read_only
from co_tui.policy.tool_specs import BUILTIN_SPECS
from co_tui.protocol.tool_spec import DEFAULT_APPROVAL_REASON


def is_safe_command(cmd: str, safe_prefixes: list[str]) -> bool:
    """Whether `cmd` may run without asking, in a read-only view of the workspace."""
    return classify_read_only(cmd, safe_prefixes).safe


@dataclass(frozen=True)
class AutoApproval:
    """Why a call runs without asking; `read_only` calls run in a read-only workspace."""

    reason: str
    read_only: bool


@dataclass(frozen=True)
class Policy:
    """The orchestrator's verdict on one deferred call before anyone is asked: run it
    (`auto`), deny it (`denied` says why), or ask the user (`ask_reason` says why)."""

    auto: AutoApproval | None
    ask_reason: str  # shown in the dialog (and in the decision line) when the user decides
    denied: str = ""  # denied without asking, by a deny rule; "" when not
    rule: str = ""  # the permission rule that allowed or denied it


def decide_policy(
    part: ToolCallPart,
    *,
    auto_confirm: bool,
    isolation_level: str,
    safe_prefixes: list[str],
    permissions: PermissionRules,
    mcp_tools: frozenset[str],
) -> Policy:
    """Permission rules first (deny, then yolo, then ask and allow), then the built-in
    policy: auto-approve a read-only command in an isolating sandbox, else ask and say why."""
    ask = approval_reason(part.tool_name, isolation_level)
    call = ToolCall(part.tool_name, tool_args(part), mcp=part.tool_name in mcp_tools)
    cmd = call.command
    read_only = classify_read_only(cmd, safe_prefixes) if cmd is not None else None
    refused = read_only.reason if read_only is not None and not read_only.safe else ""
    rules = permissions.evaluate(call, refused=refused)
    if rules.rule is not None and rules.rule.action == "deny":
        denied = f"denied by your permission rule {rules.rule.label()}"
        return Policy(None, ask, denied, rules.rule.rule.text)
    if auto_confirm:
        return Policy(AutoApproval("session approve-all (yolo) is on", read_only=False), ask)
    if rules.rule is not None:
        return _rule_policy(rules.rule, ask)
    return _built_in_policy(read_only, ask, isolation_level, rules.held_back)


def _rule_policy(entry: PermissionRule, ask: str) -> Policy:
    if entry.action == "ask":
        return Policy(None, f"{ask}; your permission rule {entry.label()} asks")
    # Allowed by the user's own rule: a command runs in the normal sandbox, not read-only.
    allowed = AutoApproval(f"allowed by your permission rule {entry.label()}", read_only=False)
    return Policy(allowed, ask, rule=entry.rule.text)


def _built_in_policy(
    verdict: ReadOnlyVerdict | None,
    ask: str,
    isolation_level: str,
    held_back: PermissionRule | None,
) -> Policy:
    if verdict is None:
        return Policy(None, ask)
    if verdict.safe and isolation_level != "none":
        return Policy(AutoApproval(verdict.reason, read_only=True), ask)
    if verdict.safe:
        return Policy(None, f"{ask}; read-only commands run without asking only in a sandbox")
    if verdict.reason:
        why = f"{ask}; not run automatically: {verdict.reason}"
        if held_back is not None:
            why += f" (a rule saved from this dialog, `{held_back.rule.text}`, never covers that)"
        return Policy(None, why)
    return Policy(None, ask)


def approval_reason(tool_name: str, isolation_level: str) -> str:
    """Why a call waits for the user, for the dialog: its spec's reason (policy/tool_specs.py)."""
    spec = BUILTIN_SPECS.get(tool_name)
    return spec.reason(isolation_level) if spec is not None else DEFAULT_APPROVAL_REASON


# Arguments that usually name a call, for tools whose spec names none (an MCP server's).
_USUAL_KEY_ARGUMENTS = ("cmd", "query", "url", "filename", "path", "channel", "to", "task", "name")


def key_argument(tool_name: str, args: dict[str, Any]) -> str:
    """The argument worth one inline line: the command, the query, the path, the target
    (the spec's `key_arg`, else a usual name, else the first argument)."""
    spec = BUILTIN_SPECS.get(tool_name)
    names = (spec.key_arg,) if spec is not None and spec.key_arg else ()
    for name in (*names, *_USUAL_KEY_ARGUMENTS):
        if name in args and args[name] not in (None, ""):
            return str(args[name])
    if args:
        first = next(iter(args.values()))
        return first if isinstance(first, str) else json.dumps(first, ensure_ascii=False)
    return ""
