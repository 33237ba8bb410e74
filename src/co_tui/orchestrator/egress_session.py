"""The egress guard inside a run: the session's tool table, and the sources a call sees.

`session_table(deps)` is the built-in table plus the session's connected MCP servers. The
sources a tool call sees are those of its run's history; a sub-agent runs on
`SubagentDeps`, which carry the sources of the parent conversation it was started from (its
task was written by a model that had read them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from pydantic_ai import RunContext

from co_tui.deps import CoDeps
from co_tui.orchestrator.egress import (
    BUILTIN_TABLE,
    Source,
    ToolTable,
    context_sources,
    has_sources,
)


@dataclass
class SubagentDeps(CoDeps):
    """A sub-agent's deps: the parent's, plus the sources of the parent conversation."""

    inherited_sources: tuple[Source, ...] = ()

    @classmethod
    def of(cls, parent: CoDeps, inherited: Sequence[Source], **changes: Any) -> SubagentDeps:
        values = {f.name: getattr(parent, f.name) for f in fields(CoDeps) if f.init}
        return cls(**(values | changes), inherited_sources=tuple(inherited))


def session_table(deps: CoDeps) -> ToolTable:
    """The built-in tools and the session's connected MCP servers' (deps.mcp): the specs
    attach_mcp gives the agent bundle too."""
    if deps.mcp is None:
        return BUILTIN_TABLE
    return BUILTIN_TABLE.with_specs(deps.mcp.tool_specs)


def inherited_sources(deps: CoDeps) -> tuple[Source, ...]:
    return deps.inherited_sources if isinstance(deps, SubagentDeps) else ()


def run_sources(ctx: RunContext[CoDeps], table: ToolTable | None = None) -> list[Source]:
    """The private or untrusted sources in the conversation this call is part of (`table`:
    the session's, when the caller has it already)."""
    table = table or session_table(ctx.deps)
    return [*inherited_sources(ctx.deps), *context_sources(ctx.messages, table)]


def guard_applies(ctx: RunContext[CoDeps]) -> bool:
    """Whether an outbound call made now must wait for the user's decision."""
    return bool(inherited_sources(ctx.deps)) or has_sources(ctx.messages, session_table(ctx.deps))


def source_labels(ctx: RunContext[CoDeps]) -> list[str]:
    return list(dict.fromkeys(s.label for s in run_sources(ctx)))
