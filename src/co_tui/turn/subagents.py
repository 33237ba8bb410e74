"""Sub-agents: a fresh agent with a few read-only tools, run inside a parent's tool call.

The child gets its own session_id and reports through the parent turn's frontend, so its
events interleave with the parent's (the frontend shows it in the sidebar, never in the
transcript). It shares the parent's RunUsage and UsageLimits: its requests count into the
parent turn and one budget covers both. It runs in the parent's task, so cancelling the
parent turn cancels it; its history is dropped, only its final answer goes back.

The egress guard holds in a sub-agent too. It sees the sources of the parent conversation
(its task was written by a model that read them) and its own; an outbound call (web_fetch,
web_search) while any is present asks the user right here, through the frontend, since a
sub-agent's run cannot pause for approval (`_EgressGuard`). Untrusted results reach its
model fenced, as in the parent. Its report lists the sources it read, so the parent counts
the report as private or untrusted when they were.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import (
    Agent,
    AgentRunResultEvent,
    FunctionToolCallEvent,
    RunContext,
    ToolDenied,
    UsageLimitExceeded,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.toolsets import FunctionToolset, WrapperToolset
from pydantic_ai.usage import RunUsage, UsageLimits

from co_tui.context.deps import CoDeps, new_session_id
from co_tui.policy.egress import EgressReview, Source, context_sources
from co_tui.policy.egress_session import SubagentDeps, review_call, session_table
from co_tui.policy.fence import FENCE_RULE, FenceUntrusted
from co_tui.protocol import events as ev
from co_tui.protocol.frontend import ApprovalRequest, FrontendProtocol, NullFrontend
from co_tui.tools.catalog import READ_ONLY_TOOLS, configured_integrations, offered
from co_tui.tools.web import web_fetch, web_search
from co_tui.turn.approval_flow import ApprovalFlow
from co_tui.turn.stream import EventStream

ToolFunc = Callable[..., Any]

SUBAGENT_NAME = "co-subagent"
SUBAGENT_INSTRUCTIONS = (
    "You are a focused research helper working for another assistant. Do only the task you "
    "are given, using the tools you have when they help. You cannot change anything: your "
    "tools only read. Answer with a short, complete, factual report of what you found; the "
    "other assistant reads it, the user does not.\n" + FENCE_RULE
)


def read_only_tools(deps: CoDeps) -> dict[str, ToolFunc]:
    """The tools a sub-agent may be given: the built-in read-only tools of the configured
    integrations (never delegate: no sub-sub-agents), and the web tools when the session's
    policy lets them run without asking (web_search when it has a key)."""
    configured = configured_integrations(deps)
    tools: dict[str, ToolFunc] = {
        func.__name__: func for func in READ_ONLY_TOOLS if offered(func.__name__, configured)
    }
    if deps.web.search_policy == "allow" and offered(web_search.__name__, configured):
        tools[web_search.__name__] = web_search
    if deps.web.fetch_policy == "allow":
        tools[web_fetch.__name__] = web_fetch
    return tools


@dataclass
class SubagentResult:
    session_id: str
    output: str | None
    usage: RunUsage  # this sub-agent's own requests and tokens (the parent's usage has them too)
    interrupted: bool = False
    error: str | None = None
    sources: tuple[Source, ...] = ()  # the private or untrusted results it read itself


def own_usage(messages: list[ModelMessage]) -> RunUsage:
    """Usage of one run's responses: the shared RunUsage also holds concurrent siblings'."""
    usage = RunUsage()
    for message in messages:
        if isinstance(message, ModelResponse):
            usage.incr(message.usage)
            usage.requests += 1
    return usage


@dataclass
class _EgressGuard(WrapperToolset[CoDeps]):
    """An outbound call the egress guard stops asks the user here, through the frontend
    (the sub-agent's run cannot pause for approval), by the same ApprovalFlow as the turn
    runner's calls (turn/approval_flow.py says what differs). Approve-all (yolo) never
    covers it, as in the main agent; choosing approve-all here turns it on in the parent
    session (`SubagentDeps.set_approve_all`)."""

    frontend: FrontendProtocol = field(default_factory=NullFrontend)  # without one: denied

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[CoDeps], tool: Any
    ) -> Any:
        if session_table(ctx.deps).is_outbound(name):  # the others are not guarded
            review = review_call(ctx, name, tool_args)
            denied = None if review is None else await self._denial(ctx, name, tool_args, review)
            if denied is not None:
                return denied  # recorded like a denial in the main agent
        return await super().call_tool(name, tool_args, ctx, tool)

    async def _denial(
        self, ctx: RunContext[CoDeps], name: str, args: dict[str, Any], review: EgressReview
    ) -> ToolDenied | None:
        """Ask the user; the denial the sub-agent reads (with the user's words), or None."""
        request = ApprovalRequest(
            session_id=ctx.deps.session_id,
            tool_call_id=ctx.tool_call_id or "",
            tool_name=name,
            args=dict(args),
            reason=review.reason,
        )
        # Asked even under approve-all: it never covers this. No "always allow" rule is
        # saved (no `rule_for`): that answer approves this call once.
        answered = await ApprovalFlow(ctx.deps, self.frontend).ask(review.request(request))
        result = answered.result(request.args)
        return result if isinstance(result, ToolDenied) else None


def build_subagent(
    model: Model | str,
    tools: list[ToolFunc],
    *,
    frontend: FrontendProtocol | None = None,
) -> Agent[CoDeps, str]:
    """Every tool is read-only and outbound calls ask through `frontend` (_EgressGuard), so
    nothing defers for approval: the output is text only."""
    guarded = _EgressGuard(FunctionToolset[CoDeps](tools), frontend=frontend or NullFrontend())
    return Agent(
        model,
        deps_type=CoDeps,
        output_type=str,
        instructions=SUBAGENT_INSTRUCTIONS,
        name=SUBAGENT_NAME,
        toolsets=[guarded],
        capabilities=[FenceUntrusted(session_table)],
    )


async def run_subagent(
    task: str,
    *,
    model: Model | str,
    tools: list[ToolFunc],
    deps: CoDeps,
    frontend: FrontendProtocol,
    usage: RunUsage,
    limits: UsageLimits | None,
    model_settings: ModelSettings | None = None,
    inherited: Sequence[Source] = (),
    typed: Sequence[str] = (),
) -> SubagentResult:
    """Run one sub-agent to its final answer. `usage` is the parent's (mutated in place);
    `inherited`, `typed`: the sources of the parent conversation and what the user typed
    there (the egress guard reads them).
    Cancellation and the shared budget running out propagate to the parent; any other
    failure comes back as `error` so the parent model can carry on without it."""
    sid = new_session_id()
    turn = replace(deps.turn, frontend=frontend)  # the parent turn's read-only approvals too
    child_deps = SubagentDeps.of(deps, inherited, typed, session_id=sid, turn=turn)
    agent = build_subagent(model, tools, frontend=frontend)
    stream = EventStream(frontend, sid)
    handle: Any = None

    def messages() -> list[ModelMessage]:
        try:
            return list(handle.new_messages()) if handle is not None else []
        except Exception:
            return []

    def report_usage() -> RunUsage:
        mine = own_usage(messages())
        stream.usage(mine.input_tokens, mine.output_tokens, mine.requests)
        return mine

    def finish(result: SubagentResult) -> SubagentResult:
        stream.close_open()
        result.usage = report_usage()
        result.sources = tuple(context_sources(messages(), session_table(child_deps)))
        stream.end(output=result.output, interrupted=result.interrupted)
        return result

    frontend.emit(ev.TurnStart(session_id=sid, prompt=task, parent_session_id=deps.session_id))
    output: str | None = None
    try:
        async with agent.run_stream_events(
            task,
            deps=child_deps,
            usage=usage,
            usage_limits=limits,
            model_settings=model_settings,
        ) as events:
            handle = events
            async for event in events:
                stream.handle(event)
                if isinstance(event, FunctionToolCallEvent):
                    report_usage()  # the response that made the call is complete
                elif isinstance(event, AgentRunResultEvent):
                    output = str(event.result.output)
    except asyncio.CancelledError:
        finish(SubagentResult(sid, None, RunUsage(), interrupted=True))
        raise
    except UsageLimitExceeded as exc:
        message = f"stopped: the turn's request budget ran out ({exc})"
        frontend.emit(ev.Error(session_id=sid, message=message))
        finish(SubagentResult(sid, None, RunUsage(), error=str(exc)))
        raise
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        frontend.emit(ev.Error(session_id=sid, message=message))
        return finish(SubagentResult(sid, None, RunUsage(), error=message))
    return finish(SubagentResult(sid, output, RunUsage()))
