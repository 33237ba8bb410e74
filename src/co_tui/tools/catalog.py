"""The built-in function tools, in the order the model is offered them, and the integration
each needs: a tool whose integration is not configured is not offered (the Google and Slack
tools' schemas alone are about 10 KB, sent with every request).

Whether a call waits for the user is the tool's spec (`requires_approval`, policy/tool_specs.py),
not a list it is in. `delegate` is not here: it starts sub-agents, which are given tools
from this catalog (turn/subagents.py), so build_agent adds it itself. The web tools (per
web_policy) and load_skill come in toolsets of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from co_tui.policy.tool_specs import BUILTIN_SPECS
from co_tui.tools import (
    google_calendar,
    google_drive,
    google_gmail,
    memory,
    obsidian,
    reminders,
    slack,
)
from co_tui.tools.shell import run_shell_command

if TYPE_CHECKING:
    from co_tui.context.deps import CoDeps

ToolFunc = Callable[..., Any]


def asks_first(func: ToolFunc) -> bool:
    """Whether every call of this built-in tool waits for the user's decision."""
    return BUILTIN_SPECS[func.__name__].requires_approval


_MODULE_TOOLS: list[ToolFunc] = [
    run_shell_command,
    *google_drive.TOOLS,
    *google_gmail.TOOLS,
    *google_calendar.TOOLS,
    *slack.TOOLS,
    *obsidian.TOOLS,
    *memory.TOOLS,
    *reminders.TOOLS,
]
# The tools that ask first, then the rest (a stable sort): the order models have always
# been offered them in.
FUNCTION_TOOLS: tuple[ToolFunc, ...] = tuple(
    sorted(_MODULE_TOOLS, key=lambda func: not asks_first(func))
)
# What a sub-agent may be given: the tools that only read (it cannot ask for approval).
READ_ONLY_TOOLS: tuple[ToolFunc, ...] = tuple(f for f in FUNCTION_TOOLS if not asks_first(f))

# The integrations built-in tools need, as /status names them.
INTEGRATIONS = ("Obsidian", "Google", "Slack", "Web search")
# The module a built-in tool lives in -> the integration it needs.
_INTEGRATION_OF_MODULE = {
    "google_drive": "Google",
    "google_gmail": "Google",
    "google_calendar": "Google",
    "slack": "Slack",
    "obsidian": "Obsidian",
}
_INTEGRATION_OF_TOOL = {"web_search": "Web search"}  # tools/web.py: the other web tools need none
_MODULE_OF_TOOL = {func.__name__: func.__module__.rsplit(".", 1)[-1] for func in _MODULE_TOOLS}


def integration_of(tool_name: str) -> str | None:
    """The integration a built-in tool needs configured, or None (the tool needs none)."""
    module = _MODULE_OF_TOOL.get(tool_name, "")
    return _INTEGRATION_OF_TOOL.get(tool_name) or _INTEGRATION_OF_MODULE.get(module)


def configured_integrations(deps: CoDeps) -> frozenset[str]:
    """The integrations the session's settings configure (a failing one included: its tools
    say what is wrong). Reads local files only (Google's credentials), never a service."""
    from co_tui.integrations.google_auth import credentials_state

    configured = {
        "Obsidian": deps.obsidian_vault_path is not None,
        "Slack": bool(deps.slack_bot_token),
        "Web search": bool(deps.brave_search_api_key),
        "Google": credentials_state(deps.google_credentials_path)[1] != "off",
    }
    return frozenset(name for name, on in configured.items() if on)


def offered(tool_name: str, configured: frozenset[str]) -> bool:
    """Whether the model is offered this tool, given the configured integrations."""
    integration = integration_of(tool_name)
    return integration is None or integration in configured
