"""System prompt assembly (see assembly.py for the order and the size cap)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from co_tui.prompts.assembly import PromptAssembly, PromptSection, assemble_prompt
from co_tui.protocol.prompt_piece import PromptPiece

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from co_tui.config.settings import Settings
    from co_tui.config.trust.project_files import ProjectView
    from co_tui.context.deps import CoDeps

__all__ = [
    "PromptAssembly",
    "PromptPiece",
    "PromptSection",
    "agent_instructions",
    "assemble_prompt",
    "get_system_prompt",
    "report_warnings",
]


def get_system_prompt(
    settings: Settings | None = None,
    project: ProjectView | None = None,
    model_name: str = "",
    provider: str = "",
) -> str:
    return assemble_prompt(settings, project, model_name, provider).text


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
    """Dynamic instructions for build_agent: assembled per request for the session's project
    (its files as read once) and the user's own files (read now, so edits to them apply on
    the next turn). What was sent is kept on the deps (`sent_instructions`): the egress
    guard reads its pieces' origins."""
    name = _model_name(model)

    # Synchronous on purpose: a few small file reads, and a thread hop here deadlocked
    # under Textual's test harness.
    def instructions(ctx: RunContext[CoDeps]) -> str:
        assembly = assemble_prompt(settings, ctx.deps.project, name, provider)
        report_warnings(assembly.warnings)
        ctx.deps.sent_instructions = assembly.pieces
        return assembly.text

    return instructions
