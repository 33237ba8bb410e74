"""Each request offers the model only the built-in tools whose integration is configured
(tools/catalog.py): Google, Slack, Obsidian and web search tools wait until they are set up.
Decided per request, so an integration set up during a session (`co-tui auth google`) is
offered from the next request; a tool not offered cannot be called either."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import ToolDefinition

from co_tui.context.deps import CoDeps
from co_tui.tools.catalog import configured_integrations, offered


@dataclass
class OfferConfiguredTools(AbstractCapability[CoDeps]):
    async def prepare_tools(
        self, ctx: RunContext[CoDeps], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        configured = configured_integrations(ctx.deps)
        return [tool for tool in tool_defs if offered(tool.name, configured)]

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # not spec-serialisable (a co-tui policy, not a setting)
