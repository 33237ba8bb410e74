"""build_agent(): the model, the tools and their approval classes, the instructions.

Untrusted tool results reach the model fenced (FenceUntrusted, after the history
processors); outbound web tools wait for approval when the egress guard says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from co_tui.config import Settings
from co_tui.deps import CoDeps
from co_tui.history import history_processors
from co_tui.llm import ResolvedModel, resolve_model
from co_tui.orchestrator.egress_session import session_table
from co_tui.orchestrator.fence import FenceUntrusted
from co_tui.prompts import agent_instructions
from co_tui.skills.tool import SOURCE as SKILLS_SOURCE
from co_tui.skills.tool import load_skill, register_skills
from co_tui.tools import google_calendar, google_drive, google_gmail, memory, obsidian, slack
from co_tui.tools.delegate import delegate
from co_tui.tools.shell import run_shell_command
from co_tui.tools.web import web_tool_sources, web_toolset

ToolFunc = Callable[..., Any]

# Tools with side effects: every call waits for the user's decision.
SIDE_EFFECT_TOOLS: list[ToolFunc] = [
    run_shell_command,
    *google_gmail.SIDE_EFFECT_TOOLS,
    *slack.SIDE_EFFECT_TOOLS,
    *memory.SIDE_EFFECT_TOOLS,
]
# Read-only tools run without asking (unless all_approval, used by evals).
READ_ONLY_TOOLS: list[ToolFunc] = [
    *google_drive.READ_ONLY_TOOLS,
    *google_gmail.READ_ONLY_TOOLS,
    *google_calendar.READ_ONLY_TOOLS,
    *slack.READ_ONLY_TOOLS,
    *obsidian.READ_ONLY_TOOLS,
    *memory.READ_ONLY_TOOLS,
    delegate,  # sub-agents get read-only tools only (subagents.py)
]


def builtin_tool_sources(settings: Settings) -> dict[str, str]:
    """{tool name: where it comes from} of every tool build_agent registers itself, in
    registration order (MCP servers' tools are attached later)."""
    sources = dict.fromkeys((f.__name__ for f in SIDE_EFFECT_TOOLS), "built-in (approval)")
    sources |= dict.fromkeys((f.__name__ for f in READ_ONLY_TOOLS), "built-in")
    return sources | web_tool_sources(settings.web_policy) | {load_skill.__name__: SKILLS_SOURCE}


@dataclass
class AgentBundle:
    agent: Agent[CoDeps, str | DeferredToolRequests]
    model_settings: ModelSettings | None
    tool_names: list[str]
    resolved: ResolvedModel | None = None
    tool_sources: dict[str, str] = field(default_factory=dict)  # tool name -> where it comes from
    summarizer: Model | str | None = None  # the model /compact and the sliding window use


def build_agent(
    settings: Settings,
    *,
    model: Model | str | None = None,
    all_approval: bool = False,
    instructions: str | None = None,
    summarizer: Model | str | None = None,
) -> AgentBundle:
    """Build the agent. `model` and `summarizer` override resolution (tests: FunctionModel)."""
    resolved: ResolvedModel | None = None
    model_settings: ModelSettings | None = None
    if model is None:
        resolved = resolve_model(settings)
        model = resolved.model
        model_settings = resolved.model_settings
    summarizer = summarizer or settings.summarization_model or model
    trim, window = history_processors(
        settings.max_history_messages, settings.tool_output_trim_chars, summarizer
    )
    if instructions is None:
        model_name = resolved.model_name if resolved else model
        instructions_source: Any = agent_instructions(
            settings, model_name, resolved.provider if resolved else ""
        )
    else:
        instructions_source = instructions
    # Web tools per web_policy (and the egress guard); skills below.
    web_tools = web_toolset(settings.web_policy, all_approval=all_approval)
    agent: Agent[CoDeps, str | DeferredToolRequests] = Agent(
        model,
        deps_type=CoDeps,
        output_type=[str, DeferredToolRequests],
        instructions=instructions_source,
        retries=settings.tool_retries,
        name="co",
        capabilities=[ProcessHistory(trim), ProcessHistory(window), FenceUntrusted(session_table)],
        toolsets=[web_tools] if web_tools is not None else [],
    )
    for func in SIDE_EFFECT_TOOLS:
        agent.tool(func, requires_approval=True)
    for func in READ_ONLY_TOOLS:
        agent.tool(func, requires_approval=all_approval)
    # Skills: load_skill, and their list in the instructions.
    register_skills(agent, all_approval=all_approval, list_in_prompt=instructions is None)
    sources = builtin_tool_sources(settings)
    return AgentBundle(agent, model_settings, list(sources), resolved, sources, summarizer)
