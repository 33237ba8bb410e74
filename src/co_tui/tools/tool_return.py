"""`tool_return`: a tool's result for the model with what the user is shown, typed.

The model reads `{"display": ..., **fields}` (the `display` text is part of what it has always
been sent); co-tui reads the `ToolDisplay` in the metadata, never the dict's keys.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic_ai import ToolReturn

from co_tui.protocol.tool_display import ToolDisplay


def tool_return(display: ToolDisplay, **fields: Any) -> ToolReturn:
    """`fields["count"]`, when given, is the display's count too."""
    count = fields.get("count")
    if isinstance(count, int):
        display = replace(display, count=count)
    return ToolReturn(return_value={"display": display.text, **fields}, metadata=display)
