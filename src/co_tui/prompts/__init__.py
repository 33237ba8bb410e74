"""System prompt assembly (see assembly.py for the order and the size cap)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_tui.prompts.assembly import PromptAssembly, PromptSection, assemble_prompt

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from co_tui.config import Settings
    from co_tui.deps import CoDeps

__all__ = [
    "PromptAssembly",
    "PromptSection",
    "agent_instructions",
    "assemble_prompt",
    "get_system_prompt",
]


def get_system_prompt(
    settings: Settings | None = None,
    workspace: Path | None = None,
    model_name: str = "",
    provider: str = "",
) -> str:
    return assemble_prompt(settings, workspace, model_name, provider).text


def _model_name(model: Any) -> str:
    return model if isinstance(model, str) else str(getattr(model, "model_name", "") or "")


def agent_instructions(
    settings: Settings, model: Any, provider: str = ""
) -> Callable[[RunContext[CoDeps]], str]:
    """Dynamic instructions for build_agent: assembled per run for the session's workspace,
    so edits to knowledge files and AGENTS.md apply on the next turn."""
    name = _model_name(model)

    # Synchronous on purpose: a few small file reads, and a thread hop here deadlocked
    # under Textual's test harness.
    def instructions(ctx: RunContext[CoDeps]) -> str:
        return assemble_prompt(settings, ctx.deps.workspace, name, provider).text

    return instructions
