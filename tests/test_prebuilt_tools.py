"""Agents share each tool function's schema (tools/prebuilt.py), never a tool's settings: an
agent built with every call asking (evals) changes nothing in an agent already built."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.models.test import TestModel

from co_tui.agent.build import AgentBundle, build_agent
from co_tui.config.settings import Settings
from co_tui.evals.runner import tool_definitions
from tests.helpers import make_deps

WEB_TOOLS = {"web_search", "web_fetch"}


def bundle(*, all_approval: bool) -> AgentBundle:
    settings = Settings(telemetry_enabled=False)
    return build_agent(settings, model=TestModel(), all_approval=all_approval, every_tool=True)


async def kinds(built: AgentBundle, tmp_path: Path) -> dict[str, str]:
    defs = await tool_definitions(built.agent, make_deps(tmp_path))
    return {name: definition.kind for name, definition in defs.items()}


async def test_an_agent_where_every_call_asks_changes_no_other_agent(tmp_path: Path) -> None:
    running = bundle(all_approval=False)
    before = await kinds(running, tmp_path)
    asking = await kinds(bundle(all_approval=True), tmp_path)
    # Every call waits for the user (the web tools decide per call, when called).
    assert {name for name, kind in asking.items() if kind != "unapproved"} <= WEB_TOOLS
    assert "function" in before.values()  # read-only tools run without asking...
    assert await kinds(running, tmp_path) == before  # ...and still do in the agent running
