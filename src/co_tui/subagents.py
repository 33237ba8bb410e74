"""Sub-agents: a fresh agent with a few read-only tools, run inside a parent's tool call.

The child gets its own session_id and reports through the parent turn's frontend, so its
events interleave with the parent's (the frontend shows it in the sidebar, never in the
transcript). It shares the parent's RunUsage and UsageLimits: its requests count into the
parent turn and one budget covers both. It runs in the parent's task, so cancelling the
parent turn cancels it; its history is dropped, only its final answer goes back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai import Agent, AgentRunResultEvent, FunctionToolCallEvent, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage, UsageLimits

from co_tui.deps import CoDeps, new_session_id
from co_tui.orchestrator.events import EventTranslator
from co_tui.orchestrator.frontend import FrontendProtocol, UsageInfo

ToolFunc = Callable[..., Any]

SUBAGENT_NAME = "co-subagent"
SUBAGENT_INSTRUCTIONS = (
    "You are a focused research helper working for another assistant. Do only the task you "
    "are given, using the tools you have when they help. You cannot change anything: your "
    "tools only read. Answer with a short, complete, factual report of what you found; the "
    "other assistant reads it, the user does not."
)


def read_only_tools(deps: CoDeps) -> dict[str, ToolFunc]:
    """The tools a sub-agent may be given: the built-in read-only tools, and the web tools
    when the session's policy lets them run without asking."""
    from co_tui.agent import READ_ONLY_TOOLS  # agent.py registers delegate: import late
    from co_tui.tools.web import web_fetch, web_search

    tools: dict[str, ToolFunc] = {
        func.__name__: func for func in READ_ONLY_TOOLS if func.__name__ != "delegate"
    }  # no sub-sub-agents
    if deps.web.search_policy == "allow":
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


def own_usage(messages: list[ModelMessage]) -> RunUsage:
    """Usage of one run's responses: the shared RunUsage also holds concurrent siblings'."""
    usage = RunUsage()
    for message in messages:
        if isinstance(message, ModelResponse):
            usage.incr(message.usage)
            usage.requests += 1
    return usage


def build_subagent(model: Model | str, tools: list[ToolFunc]) -> Agent[CoDeps, str]:
    # Every tool is read-only, so nothing defers for approval: the output is text only.
    return Agent(
        model,
        deps_type=CoDeps,
        output_type=str,
        instructions=SUBAGENT_INSTRUCTIONS,
        name=SUBAGENT_NAME,
        tools=tools,
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
) -> SubagentResult:
    """Run one sub-agent to its final answer. `usage` is the parent's (mutated in place).
    Cancellation and the shared budget running out propagate to the parent; any other
    failure comes back as `error` so the parent model can carry on without it."""
    sid = new_session_id()
    child_deps = replace(deps, session_id=sid, frontend=frontend)
    agent = build_subagent(model, tools)
    translator = EventTranslator(frontend, sid)
    handle: Any = None

    def messages() -> list[ModelMessage]:
        try:
            return list(handle.new_messages()) if handle is not None else []
        except Exception:
            return []

    def report_usage() -> RunUsage:
        mine = own_usage(messages())
        info = UsageInfo(
            mine.input_tokens, mine.output_tokens, mine.requests, translator.tool_call_count
        )
        frontend.on_usage(sid, info)
        return mine

    def finish(result: SubagentResult) -> SubagentResult:
        translator.close_open()
        result.usage = report_usage()
        frontend.on_turn_end(sid, result.interrupted)
        return result

    frontend.on_turn_start(sid, task)
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
                translator.handle(event)
                if isinstance(event, FunctionToolCallEvent):
                    report_usage()  # the response that made the call is complete
                elif isinstance(event, AgentRunResultEvent):
                    output = str(event.result.output)
    except asyncio.CancelledError:
        finish(SubagentResult(sid, None, RunUsage(), interrupted=True))
        raise
    except UsageLimitExceeded as exc:
        frontend.on_error(sid, f"stopped: the turn's request budget ran out ({exc})")
        finish(SubagentResult(sid, None, RunUsage(), error=str(exc)))
        raise
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        frontend.on_error(sid, message)
        return finish(SubagentResult(sid, None, RunUsage(), error=message))
    return finish(SubagentResult(sid, output, RunUsage()))
