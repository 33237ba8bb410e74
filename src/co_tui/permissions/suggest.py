"""The rule the approval dialog offers for one call, and the check of what the user edits.

The offer covers exactly this call: `shell(<the command>)`, `web_fetch(domain:<host>)`, or the
bare tool name. No offer for a command the rule text could not show faithfully on one line
(line breaks, control or invisible characters) or could not express (ending in `*`).
"""

from __future__ import annotations

from co_tui.permissions.matching import ToolCall, covers, fetch_host
from co_tui.permissions.rules import (
    FETCH_TOOL,
    SHELL_TOOL,
    Rule,
    RuleError,
    parse_rule,
    sh_strip,
)


def suggest_rule(call: ToolCall) -> str | None:
    if call.tool_name == SHELL_TOOL:
        cmd = sh_strip(call.command or "")
        if not cmd or not cmd.isprintable() or cmd.endswith("*"):
            return None
        text = f"shell({cmd})"
    elif call.tool_name == FETCH_TOOL:
        host = fetch_host(call.url) if call.url is not None else None
        if host is None:
            return None
        text = f"web_fetch(domain:{host})"
    else:
        text = call.tool_name
    try:
        rule = parse_rule(text)
    except RuleError:
        return None
    return text if covers(rule, call) else None


def check_rule_for(text: str, call: ToolCall) -> Rule:
    """The rule the user wrote for this call. Raises RuleError when it is not a rule or does
    not cover the call it is saved from."""
    rule = parse_rule(text)
    if not covers(rule, call):
        raise RuleError("this rule does not cover the call you are deciding on")
    return rule
