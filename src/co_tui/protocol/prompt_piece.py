"""A part of the system prompt that someone other than co-tui wrote, with its origin: the
egress guard and the fence read it, the prompt assembly makes it."""

from __future__ import annotations

from dataclasses import dataclass

from co_tui.protocol.tool_spec import Origin


@dataclass(frozen=True)
class PromptPiece:
    """A part of the system prompt someone other than co-tui wrote, with its origin."""

    label: str  # "your knowledge file me.md", "project file AGENTS.md"
    origin: Origin
    text: str
