"""The built-in function tools, in the order the model is offered them.

Whether a call waits for the user is the tool's spec (`requires_approval`, policy/tool_specs.py),
not a list it is in. `delegate` is not here: it starts sub-agents, which are given tools
from this catalog (turn/subagents.py), so build_agent adds it itself. The web tools (per
web_policy) and load_skill come in toolsets of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from co_tui.policy.tool_specs import BUILTIN_SPECS
from co_tui.tools import google_calendar, google_drive, google_gmail, memory, obsidian, slack
from co_tui.tools.shell import run_shell_command

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
]
# The tools that ask first, then the rest (a stable sort): the order models have always
# been offered them in.
FUNCTION_TOOLS: tuple[ToolFunc, ...] = tuple(
    sorted(_MODULE_TOOLS, key=lambda func: not asks_first(func))
)
# What a sub-agent may be given: the tools that only read (it cannot ask for approval).
READ_ONLY_TOOLS: tuple[ToolFunc, ...] = tuple(f for f in FUNCTION_TOOLS if not asks_first(f))
