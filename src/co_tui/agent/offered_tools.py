"""Each request offers the model only the built-in tools whose integration is configured
(tools/catalog.py): Google, Slack, Obsidian and web search tools wait until they are set up.
Decided per request, so an integration set up during a session (`co-tui auth google`) is
offered from the next request; a tool not offered cannot be called either.

In their place the instructions carry one line per integration not set up, so a request for
one is answered with how to set it up (a few hundred bytes instead of ~8 KB of schemas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.agent.abstract import AgentInstructions
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import ToolDefinition

from co_tui.context.deps import CoDeps
from co_tui.tools.catalog import INTEGRATIONS, configured_integrations, offered

# Each of tools/catalog.INTEGRATIONS -> what it gives and how a user sets it up.
SET_UP_HINTS = {
    "Obsidian": "reading the user's notes: set OBSIDIAN_VAULT_PATH (obsidian_vault_path)",
    "Google": "Google Drive, Gmail and Calendar: run `co-tui auth google`",
    "Slack": "Slack: set SLACK_BOT_TOKEN (slack_bot_token)",
    "Web search": "web search: set BRAVE_SEARCH_API_KEY (brave_search_api_key)",
}


def not_set_up_note(configured: frozenset[str]) -> str:
    missing = [SET_UP_HINTS[name] for name in INTEGRATIONS if name not in configured]
    if not missing:
        return ""
    lines = "\n".join(f"- {what}" for what in missing)
    return (
        "These integrations are not set up, so you have no tools for them:\n"
        f"{lines}\n"
        "When the user asks for one, say it is not set up and how to set it up; never claim "
        "to have used it."
    )


@dataclass
class OfferConfiguredTools(AbstractCapability[CoDeps]):
    explain_missing: bool = True  # False: the caller's instructions are sent as they are

    async def prepare_tools(
        self, ctx: RunContext[CoDeps], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        configured = configured_integrations(ctx.deps)
        return [tool for tool in tool_defs if offered(tool.name, configured)]

    def get_instructions(self) -> AgentInstructions:
        if not self.explain_missing:
            return None

        # RunContext[Any]: pydantic-ai's alias (AgentInstructions) takes no deps type here.
        def note(ctx: RunContext[Any]) -> str:
            return not_set_up_note(configured_integrations(ctx.deps))

        return note

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # not spec-serialisable (a co-tui policy, not a setting)
