"""The egress guard inside a run: the session's tool table, and the context a call sees.

`session_table(deps)` is the built-in table plus the session's connected MCP servers. The
context a tool call sees is its run's history and the system prompt last sent (the deps'
`sent_instructions`); a sub-agent runs on `SubagentDeps`, which carry the sources and the
typed text of the parent conversation it was started from (its task was written by a model
that had read them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from pydantic_ai import RunContext

from co_tui.context.deps import CoDeps
from co_tui.context.origins import typed_texts
from co_tui.policy.egress import (
    BUILTIN_TABLE,
    EgressReview,
    Source,
    ToolTable,
    context_sources,
    egress_review,
)
from co_tui.policy.tool_specs import BUILTIN_SPECS


@dataclass
class SubagentDeps(CoDeps):
    """A sub-agent's deps: the parent's, plus the sources and typed text of the parent
    conversation, and the parent session's deps (`parent`)."""

    inherited_sources: tuple[Source, ...] = ()
    inherited_typed: tuple[str, ...] = ()
    parent: CoDeps | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(
        cls,
        parent: CoDeps,
        inherited: Sequence[Source],
        typed: Sequence[str] = (),
        **changes: Any,
    ) -> SubagentDeps:
        values = {f.name: getattr(parent, f.name) for f in fields(CoDeps) if f.init}
        return cls(
            **(values | changes),
            inherited_sources=tuple(inherited),
            inherited_typed=tuple(typed),
            parent=parent,
        )

    def set_approve_all(self, on: bool) -> None:
        """A sub-agent works for its parent's session: approve-all chosen in its dialog is
        the parent session's too (the status bar's yolo, the parent's later calls)."""
        super().set_approve_all(on)
        if self.parent is not None:
            self.parent.set_approve_all(on)


SHELL = "run_shell_command"


def session_table(deps: CoDeps, *, shell_network: bool = False) -> ToolTable:
    """The built-in tools and the session's connected MCP servers' (deps.mcp): the specs
    attach_mcp gives the agent bundle too. A shell that can reach the network (no isolation,
    or sandbox_network "bridge") sends data out like any outbound tool; `shell_network`:
    the table for one command approved with network, which counts the same."""
    table = BUILTIN_TABLE
    if deps.shell_reaches_network or shell_network:
        shell = replace(BUILTIN_SPECS[SHELL], outbound="the network", local=False)
        table = table.with_specs([shell])
    if deps.mcp is not None:
        table = table.with_specs(deps.mcp.tool_specs)
    return table


def inherited_sources(deps: CoDeps) -> tuple[Source, ...]:
    return deps.inherited_sources if isinstance(deps, SubagentDeps) else ()


def run_sources(ctx: RunContext[CoDeps], table: ToolTable | None = None) -> list[Source]:
    """The private or untrusted pieces of the context this call is part of (`table`: the
    session's, when the caller has it already)."""
    table = table or session_table(ctx.deps)
    here = context_sources(ctx.messages, table, ctx.deps.sent_instructions)
    return [*inherited_sources(ctx.deps), *here]


def run_typed(ctx: RunContext[CoDeps]) -> list[str]:
    """What the user typed into this conversation (and into the parent's, for a sub-agent)."""
    inherited = ctx.deps.inherited_typed if isinstance(ctx.deps, SubagentDeps) else ()
    return [*inherited, *typed_texts(ctx.messages)]


def review_call(
    ctx: RunContext[CoDeps], tool_name: str, args: dict[str, Any]
) -> EgressReview | None:
    """The egress guard's review of a call made now; None: nothing to guard."""
    table = session_table(ctx.deps)
    return egress_review(tool_name, args, run_sources(ctx, table), table, run_typed(ctx))


def source_labels(ctx: RunContext[CoDeps]) -> list[str]:
    return list(dict.fromkeys(s.label for s in run_sources(ctx)))
