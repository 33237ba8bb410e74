"""delegate: hand a self-contained task to a sub-agent with a few read-only tools.

The sub-agent sees the egress guard's sources of this conversation (so its outbound calls
ask while they are present) and its report lists the private and untrusted sources it read
itself, so the guard counts the report as what it read.
"""

from __future__ import annotations

from typing import cast

from pydantic_ai import ModelRetry, RunContext, ToolReturn
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from co_tui.context.deps import CoDeps
from co_tui.policy.egress import Source
from co_tui.policy.egress_session import run_sources, run_typed
from co_tui.protocol.frontend import NullFrontend
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.tools.tool_return import tool_return
from co_tui.turn.subagents import read_only_tools, run_subagent

MAX_TASK_CHARS = 4000


async def delegate(
    ctx: RunContext[CoDeps], task: str, tools: list[str] | None = None
) -> ToolReturn:
    """Hand a self-contained research task to a sub-agent and get back its final report.

    Use it for independent look-ups that can run side by side: call it several times in one
    response and the sub-agents work concurrently. A sub-agent sees none of this
    conversation, so say everything it needs in `task`. It can only read, never change
    anything.

    Args:
        task: What the sub-agent should find out, complete and self-contained.
        tools: Names of read-only tools to give it (for example search_notes, read_note,
            recall_memory, web_search, web_fetch). Empty: it answers from the task alone.
    """
    if not task.strip():
        raise ModelRetry("`task` is empty: describe what the sub-agent should find out.")
    if len(task) > MAX_TASK_CHARS:
        raise ModelRetry(f"`task` is longer than {MAX_TASK_CHARS} characters: shorten it.")
    available = read_only_tools(ctx.deps)
    names = list(dict.fromkeys(tools or []))
    unknown = [name for name in names if name not in available]
    if unknown:
        raise ModelRetry(
            f"Not available to sub-agents: {', '.join(unknown)}. "
            f"Choose from: {', '.join(sorted(available))}."
        )
    # co-tui runs no realtime sessions: the model and its settings are request-response ones.
    assert isinstance(ctx.model, Model)
    result = await run_subagent(
        task,
        model=ctx.model,
        tools=[available[name] for name in names],
        deps=ctx.deps,
        frontend=ctx.deps.turn.frontend or NullFrontend(),
        usage=ctx.usage,
        limits=ctx.usage_limits,
        model_settings=cast("ModelSettings | None", ctx.model_settings),
        inherited=run_sources(ctx),
        typed=run_typed(ctx),
    )
    tokens = result.usage.input_tokens + result.usage.output_tokens
    summary = f"{result.usage.requests} request(s), {tokens:,} tokens"
    if result.error is not None:
        return tool_return(
            ToolDisplay(f"sub-agent failed ({summary}): {result.error}", error=True),
            error=result.error,
            session_id=result.session_id,
            **_read(result.sources),  # what it read before it failed still counts
        )
    return tool_return(
        ToolDisplay(f"sub-agent answered ({summary})"),
        answer=result.output or "",
        session_id=result.session_id,
        **_read(result.sources),
    )


def _read(sources: tuple[Source, ...]) -> dict[str, list[str]]:
    """The labels of what the sub-agent read that was private, and that was untrusted."""
    private = list(dict.fromkeys(s.label for s in sources if s.origin.private))
    untrusted = list(dict.fromkeys(s.label for s in sources if s.origin.untrusted))
    out: dict[str, list[str]] = {}
    if private:
        out["private_sources"] = private
    if untrusted:
        out["untrusted_sources"] = untrusted
    return out
