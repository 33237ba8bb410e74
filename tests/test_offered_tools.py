"""The model is offered only the tools of integrations that are set up (agent/offered_tools.py):
a user with no Google, Slack, vault or search key does not send their schemas on every
request, and a model that calls one anyway runs nothing."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import SecretStr
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui.agent.build import build_agent
from co_tui.agent.offered_tools import SET_UP_HINTS
from co_tui.config.settings import Settings
from co_tui.evals.runner import tool_definitions
from co_tui.tools.catalog import INTEGRATIONS
from tests.helpers import make_deps

INTEGRATION_TOOLS = {
    "draft_email",
    "search_drive",
    "list_emails",
    "list_calendar_events",
    "post_slack_message",
    "list_slack_channels",
    "search_notes",
    "read_note",
}


def _schema_bytes(tools: dict[str, object]) -> int:
    return sum(len(json.dumps(t.parameters_json_schema)) for t in tools.values())  # type: ignore[attr-defined]


async def test_nothing_set_up_offers_only_the_tools_that_need_nothing(tmp_path: Path) -> None:
    settings = Settings()
    every = await tool_definitions(
        build_agent(settings, model="test", instructions="", every_tool=True).agent,
        make_deps(tmp_path, settings),
    )
    offered = await tool_definitions(
        build_agent(settings, model="test", instructions="").agent, make_deps(tmp_path, settings)
    )
    assert not INTEGRATION_TOOLS & set(offered)
    assert {"run_shell_command", "save_memory", "recall_memory", "web_fetch"} <= set(offered)
    # The point of it: several kilobytes of schema are no longer sent with every request.
    assert _schema_bytes(every) - _schema_bytes(offered) > 3000


async def test_each_integration_set_up_brings_its_tools(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    google = tmp_path / "google.json"
    google.write_text(json.dumps({"type": "authorized_user", "refresh_token": "r"}))
    settings = Settings(
        obsidian_vault_path=str(vault),
        slack_bot_token=SecretStr("xoxb-test"),
        google_credentials_path=str(google),
        brave_search_api_key=SecretStr("brave"),
    )
    offered = await tool_definitions(
        build_agent(settings, model="test", instructions="").agent, make_deps(tmp_path, settings)
    )
    assert INTEGRATION_TOOLS | {"web_search"} <= set(offered)


async def test_client_secrets_alone_do_not_offer_google_tools(tmp_path: Path) -> None:
    """Until `co-tui auth google` has signed in, a tool could only fail."""
    secrets = tmp_path / "client.json"
    secrets.write_text(json.dumps({"installed": {"client_id": "x"}}))
    settings = Settings(google_credentials_path=str(secrets))
    offered = await tool_definitions(
        build_agent(settings, model="test", instructions="").agent, make_deps(tmp_path, settings)
    )
    assert "search_drive" not in offered and "draft_email" not in offered


async def test_a_tool_not_offered_cannot_be_called(tmp_path: Path) -> None:
    """A model (or injected text) naming a Slack tool with no Slack set up gets told the tool
    does not exist; nothing runs and the turn goes on."""
    seen: list[ModelMessage] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(messages)
        if len(messages) == 1:
            call = ToolCallPart("post_slack_message", {"channel": "#general", "text": "hi"})
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("done")])

    settings = Settings()
    bundle = build_agent(settings, model=FunctionModel(model), instructions="")
    result = await bundle.agent.run("post hi", deps=make_deps(tmp_path, settings))
    assert result.output == "done"
    answers = [
        str(part.content)
        for message in seen
        for part in getattr(message, "parts", [])
        if isinstance(part, ToolReturnPart | RetryPromptPart)
    ]
    assert answers and answers[0].startswith("Unknown tool name: 'post_slack_message'")


async def test_the_instructions_say_how_to_set_up_what_is_missing(tmp_path: Path) -> None:
    """In place of the tools, one line each: the model can tell the user what to set."""
    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(str(getattr(messages[-1], "instructions", "")))
        return ModelResponse(parts=[TextPart("ok")])

    settings = Settings(slack_bot_token=SecretStr("xoxb-test"))
    bundle = build_agent(settings, model=FunctionModel(model))
    await bundle.agent.run("hi", deps=make_deps(tmp_path, settings))
    assert "co-tui auth google" in seen[0] and "BRAVE_SEARCH_API_KEY" in seen[0]
    assert "SLACK_BOT_TOKEN" not in seen[0]  # set up: its tools are there instead
    assert set(INTEGRATIONS) == set(SET_UP_HINTS)
