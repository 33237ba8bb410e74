"""System prompt assembly (see assembly.py for the order and the size cap)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
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
    "report_warnings",
]


def get_system_prompt(
    settings: Settings | None = None,
    workspace: Path | None = None,
    model_name: str = "",
    provider: str = "",
) -> str:
    return assemble_prompt(settings, workspace, model_name, provider).text


_log = logging.getLogger(__name__)
_reported: set[str] = set()
_reported_lock = threading.Lock()


def report_warnings(warnings: Iterable[str]) -> None:
    """Log each prompt warning (a refused or truncated file) once per process: the prompt
    is assembled on every model request, the user needs to hear about it once."""
    with _reported_lock:
        fresh = [w for w in warnings if w not in _reported]
        _reported.update(fresh)
    for warning in fresh:
        _log.warning("%s", warning)


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
        assembly = assemble_prompt(settings, ctx.deps.workspace, name, provider)
        report_warnings(assembly.warnings)
        return assembly.text

    return instructions
