"""build_agent(): the model, the tools (each asks first or not per its spec, policy/tool_specs.py),
the instructions.

Untrusted tool results reach the model fenced (FenceUntrusted, after the history
processors); outbound web tools wait for approval when the egress guard says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from co_tui.agent.delegate import delegate
from co_tui.agent.offered_tools import OfferConfiguredTools
from co_tui.config.settings import Settings
from co_tui.context.deps import CoDeps
from co_tui.context.window import SendWindow
from co_tui.llm import ResolvedModel, resolve_model
from co_tui.policy.egress_session import session_table
from co_tui.policy.fence import FenceUntrusted
from co_tui.policy.tool_specs import BUILTIN_SPECS
from co_tui.prompts import agent_instructions
from co_tui.protocol.tool_spec import ToolSpec
from co_tui.skills.tool import load_skill, register_skills
from co_tui.tools.catalog import FUNCTION_TOOLS
from co_tui.tools.prebuilt import prebuilt_tool
from co_tui.tools.web import web_tool_specs, web_toolset

# The function tools build_agent registers itself, each with its spec's approval; sub-agents
# get the read-only ones (tools/catalog.py) and never delegate.
AGENT_TOOLS = (*FUNCTION_TOOLS, delegate)


def builtin_tool_specs(settings: Settings, *, all_approval: bool = False) -> dict[str, ToolSpec]:
    """{tool name: spec} of every tool build_agent registers itself, in registration order
    (MCP servers' tools are attached later). `all_approval`: every call asks (evals)."""
    specs = {func.__name__: BUILTIN_SPECS[func.__name__] for func in AGENT_TOOLS}
    specs |= web_tool_specs(settings.web_policy)
    specs[load_skill.__name__] = BUILTIN_SPECS[load_skill.__name__]
    if all_approval:
        return {name: replace(spec, requires_approval=True) for name, spec in specs.items()}
    return specs


@dataclass
class AgentBundle:
    agent: Agent[CoDeps, str | DeferredToolRequests]
    model_settings: ModelSettings | None
    # Every tool the model is offered, in order: where it comes from, whether it asks first.
    tool_specs: dict[str, ToolSpec]
    resolved: ResolvedModel | None = None
    summarizer: Model | str | None = None  # the model /compact and the sliding window use

    @property
    def tool_names(self) -> list[str]:
        return list(self.tool_specs)

    def tools_by_source(self) -> dict[str, list[str]]:
        """Tool names grouped by where they come from ('built-in', 'web', 'mcp:<server>',
        …); groups and tools keep their order."""
        groups: dict[str, list[str]] = {}
        for spec in self.tool_specs.values():
            groups.setdefault(spec.source, []).append(spec.name)
        return groups


def build_agent(
    settings: Settings,
    *,
    model: Model | str | None = None,
    all_approval: bool = False,
    instructions: str | None = None,
    summarizer: Model | str | None = None,
    every_tool: bool = False,
) -> AgentBundle:
    """Build the agent. `model` and `summarizer` override resolution (tests: FunctionModel).
    `every_tool`: the tools of integrations not configured are offered too (evals, where no
    call runs); otherwise they wait until set up (agent/offered_tools.py)."""
    resolved: ResolvedModel | None = None
    model_settings: ModelSettings | None = None
    if model is None:
        resolved = resolve_model(settings)
        model = resolved.model
        model_settings = resolved.model_settings
    summarizer = summarizer or settings.summarization_model or model
    window = SendWindow(
        settings.max_history_messages,
        summarizer,
        settings.tool_output_trim_chars,
        retries=settings.model_http_retries,
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
    specs = builtin_tool_specs(settings, all_approval=all_approval)
    agent: Agent[CoDeps, str | DeferredToolRequests] = Agent(
        model,
        deps_type=CoDeps,
        output_type=[str, DeferredToolRequests],
        instructions=instructions_source,
        retries=settings.tool_retries,
        name="co",
        capabilities=[
            window,
            FenceUntrusted(session_table),
            *([] if every_tool else [OfferConfiguredTools(explain_missing=instructions is None)]),
        ],
        tools=[
            prebuilt_tool(func, requires_approval=specs[func.__name__].requires_approval)
            for func in AGENT_TOOLS
        ],
        toolsets=[web_tools] if web_tools is not None else [],
    )
    # Skills: load_skill, and their list in the instructions.
    register_skills(agent, all_approval=all_approval, list_in_prompt=instructions is None)
    return AgentBundle(agent, model_settings, specs, resolved, summarizer)
