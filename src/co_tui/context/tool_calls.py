"""A tool call's arguments as a dict, whichever shape the provider sent them in."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_ai.messages import ToolCallPart


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
