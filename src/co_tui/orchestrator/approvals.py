"""Which deferred calls need the user, and what the user decided.

A command the read-only classifier (readonly.py) accepts is approved without asking, only
inside an isolating sandbox, and runs there in a read-only view of the workspace with no
network. A command it refuses is asked about, and the dialog says why (the option named).
What is approved is exactly what runs: approved calls are resumed with
`ToolApproved(override_args=<the args shown>)`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import ToolCallPart

from co_tui.orchestrator.readonly import classify_read_only

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
    """The orchestrator's verdict on one deferred call before anyone is asked."""

    auto: AutoApproval | None
    ask_reason: str  # shown in the dialog (and in the decision line) when the user decides


def decide_policy(
    part: ToolCallPart,
    *,
    auto_confirm: bool,
    isolation_level: str,
    safe_prefixes: list[str],
) -> Policy:
    """Auto-approve (yolo, or a read-only command in an isolating sandbox), else ask and say why."""
    ask = approval_reason(part.tool_name, isolation_level)
    if auto_confirm:
        return Policy(AutoApproval("session approve-all (yolo) is on", read_only=False), ask)
    if part.tool_name != SHELL_TOOL:
        return Policy(None, ask)
    cmd = tool_args(part).get("cmd")
    if not isinstance(cmd, str):
        return Policy(None, ask)
    verdict = classify_read_only(cmd, safe_prefixes)
    if verdict.safe and isolation_level != "none":
        return Policy(AutoApproval(verdict.reason, read_only=True), ask)
    if verdict.safe:
        return Policy(None, f"{ask}; read-only commands run without asking only in a sandbox")
    if verdict.reason:
        return Policy(None, f"{ask}; not run automatically: {verdict.reason}")
    return Policy(None, ask)


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
