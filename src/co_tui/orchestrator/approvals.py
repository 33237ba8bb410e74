"""Which deferred calls need the user, and what the user decided.

Safe shell prefixes auto-approve only inside an isolating sandbox, and never when the
command holds a shell operator. What is approved is exactly what runs: approved calls are
resumed with `ToolApproved(override_args=<the args shown>)`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.messages import ToolCallPart

# Any of these makes a command compound, redirected, substituted or backgrounded.
SHELL_OPERATORS = (";", "&", "|", ">", "<", "`", "$(", "\n", "\r")

SHELL_TOOL = "run_shell_command"


def tool_args(part: ToolCallPart) -> dict[str, Any]:
    """ToolCallPart.args is str | dict | None depending on the provider."""
    args = part.args
    if args is None:
        return {}
    if isinstance(args, dict):
        return dict(args)
    try:
        parsed = json.loads(args) if args.strip() else {}
    except json.JSONDecodeError:
        return {"_raw": args}
    return parsed if isinstance(parsed, dict) else {"_value": parsed}


def has_shell_operator(cmd: str) -> bool:
    return any(op in cmd for op in SHELL_OPERATORS)


def is_safe_command(cmd: str, safe_prefixes: list[str]) -> bool:
    """A command is safe when it is a known read-only prefix and has no operator at all."""
    stripped = cmd.strip()
    if not stripped or has_shell_operator(cmd):
        return False
    for prefix in safe_prefixes:
        prefix = prefix.strip()
        if prefix and (stripped == prefix or stripped.startswith(prefix + " ")):
            return True
    return False


def auto_approval_reason(
    part: ToolCallPart,
    *,
    auto_confirm: bool,
    isolation_level: str,
    safe_prefixes: list[str],
) -> str | None:
    """Why this call may run without asking, or None when the user must decide."""
    if auto_confirm:
        return "session approve-all (yolo) is on"
    if part.tool_name == SHELL_TOOL and isolation_level != "none":
        cmd = tool_args(part).get("cmd")
        if isinstance(cmd, str) and is_safe_command(cmd, safe_prefixes):
            return "read-only command in an isolating sandbox"
    return None


# Why a side-effectful tool needs the user: shown in the approval dialog.
APPROVAL_REASONS: dict[str, str] = {
    "draft_email": "creates a draft in your Gmail account",
    "post_slack_message": "posts a message others will see in Slack",
    "save_memory": "stores a memory that future sessions will see",
    "web_search": "sends this query to the web search provider (web_policy.search is 'ask')",
    "web_fetch": "fetches this address from the internet (web_policy.fetch is 'ask')",
}


def approval_reason(tool_name: str, isolation_level: str) -> str:
    if tool_name == SHELL_TOOL:
        if isolation_level == "none":
            return "runs a command on this machine without a sandbox"
        return f"runs a command in the sandbox (isolation: {isolation_level})"
    if tool_name in APPROVAL_REASONS:
        return APPROVAL_REASONS[tool_name]
    return "calls a tool whose server asks for approval of every call, or that has side effects"


def key_argument(tool_name: str, args: dict[str, Any]) -> str:
    """The argument worth one inline line: the command, the query, the path, the target."""
    for name in ("cmd", "query", "url", "filename", "path", "channel", "to", "task", "name"):
        if name in args and args[name] not in (None, ""):
            return str(args[name])
    if args:
        first = next(iter(args.values()))
        return first if isinstance(first, str) else json.dumps(first, ensure_ascii=False)
    return ""
