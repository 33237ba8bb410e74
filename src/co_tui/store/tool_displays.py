"""A stored tool return's `ToolDisplay`, typed again when messages are read back.

pydantic-ai stores `ToolReturnPart.metadata` as plain JSON, so a `ToolDisplay` comes back as
`{"text": ..., "error": ...}`. Metadata that is exactly that (nothing more, the right types)
becomes a `ToolDisplay` again; any other metadata (an MCP app's, say) is left as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

import pydantic
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

from co_tui.protocol.tool_display import ToolDisplay

_DISPLAY = pydantic.TypeAdapter(ToolDisplay)


def _as_display(metadata: object) -> ToolDisplay | None:
    try:
        display = _DISPLAY.validate_python(metadata)
    except pydantic.ValidationError:
        return None
    return display if _DISPLAY.dump_python(display) == metadata else None  # no extra keys


def restore_displays(messages: Sequence[ModelMessage]) -> None:
    """Type the stored displays of freshly decoded `messages`, in place."""
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and isinstance(part.metadata, dict):
                part.metadata = _as_display(part.metadata) or part.metadata
