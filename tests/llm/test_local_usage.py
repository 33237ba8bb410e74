"""The embedded model's token counts: every request it makes is counted (llama-cpp-python's
server sends no usage in a stream: there co-tui counts with the server's own tokenizer)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.messages import (
    InstructionPart,
    ModelMessage,
    ModelRequest,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from co_tui.agent.build import build_agent
from co_tui.context.deps import create_deps
from co_tui.llm import resolve_model
from co_tui.llm.local import server as local_server
from co_tui.llm.local.provider import LocalModel
from co_tui.llm.local.strategy import DECLINED
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.llm.conftest import local_settings

pytestmark = [pytest.mark.llm, pytest.mark.usefixtures("allow_model_requests")]


async def test_a_streamed_local_answer_counts_its_tokens(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    settings = local_settings(tmp_path)
    bundle = build_agent(settings)
    deps = create_deps(settings, tmp_path)
    frontend = RecordingFrontend()

    result = await run_turn(
        bundle.agent,
        "What colour is the sky?",
        deps=deps,
        history=[],
        frontend=frontend,
        model_settings=bundle.model_settings,
    )

    assert result.ok, result.error
    (usage,) = frontend.of("usage")
    # The system prompt alone is hundreds of tokens; the answer at least one.
    assert usage.input_tokens > 100
    assert usage.output_tokens >= 1
    assert result.usage.input_tokens == usage.input_tokens


def _tool(name: str, description: str) -> ToolDefinition:
    schema = {"type": "object", "properties": {"query": {"type": "string"}}}
    return ToolDefinition(name=name, description=description, parameters_json_schema=schema)


async def test_the_request_that_chooses_a_tool_is_counted_too(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    """With tools, the model first chooses (a request of its own) and then answers or writes
    arguments: the response counts both requests; a refusal counts the choice."""
    model = resolve_model(local_settings(tmp_path, local_tool_choice="model")).model
    assert isinstance(model, LocalModel)
    system = [InstructionPart("You are a helpful assistant on the user's computer. " * 20)]
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Find my notes about the garden.")])
    ]
    tools = [
        _tool("search_notes", "Search the user's notes for words."),
        _tool("list_notes", "List the notes in a folder of the user's notes."),
    ]
    short: ModelSettings = {"max_tokens": 16}

    plain = await model.request(messages, short, ModelRequestParameters(instruction_parts=system))
    with_tools = ModelRequestParameters(instruction_parts=system, function_tools=tools)
    chosen = await model.request(messages, short, with_tools)

    assert plain.usage.input_tokens > 200
    declined = any(isinstance(p, TextPart) and p.content == DECLINED for p in chosen.parts)
    if declined:  # one request: the choice, which carries the conversation and the options
        assert chosen.usage.input_tokens > plain.usage.input_tokens
    else:  # two requests, each carrying the conversation
        assert chosen.usage.input_tokens >= 2 * plain.usage.input_tokens
    assert chosen.usage.output_tokens >= 1
