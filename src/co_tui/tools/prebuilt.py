"""pydantic-ai tools made from co-tui's tool functions, each function's schema built once per
process.

Making a `Tool` inspects its function and generates the JSON schema and validator of its
arguments: about 6 ms a tool, a fifth of a second for an agent's forty, paid again at every
agent build (start-up, `/model`, every test app). The costly part depends on the function
alone, so it is made once; each agent gets a shallow copy, since pydantic-ai sets retries,
approval and metadata on the tool it adds (the schema is only read).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic_ai import Tool

from co_tui.context.deps import CoDeps


@cache
def _template(func: Callable[..., Any]) -> Tool[CoDeps]:
    return Tool(func, takes_ctx=True)


def prebuilt_tool(func: Callable[..., Any], *, requires_approval: bool = False) -> Tool[CoDeps]:
    """A tool for `func` (its first parameter a RunContext), as `agent.tool` would make it."""
    tool = copy.copy(_template(func))
    tool.requires_approval = requires_approval
    return tool
