"""Routing a request to a tool or to an answer, for the embedded model: no server needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.evals.runner import tool_definitions
from co_tui.llm.local.route import Example, Router, builtin_examples, terms
from tests.helpers import make_deps


@pytest.fixture
async def builtin_tools(tmp_path: Path) -> list[ToolDefinition]:
    """Every built-in tool as the model sees it."""
    bundle = build_agent(Settings(), model=TestModel(), all_approval=True, every_tool=True)
    return list((await tool_definitions(bundle.agent, make_deps(tmp_path))).values())


WEATHER = ToolDefinition(
    name="get_forecast",
    description="Weather forecast for a city: temperature, rain and wind for the coming days.",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


@pytest.mark.parametrize(
    ("request_text", "tool"),
    [
        ("list the files here", "run_shell_command"),
        ("what's in my inbox today?", "list_emails"),
        ("search my notes for the roadmap", "search_notes"),
        ("fetch https://example.com/changes", "web_fetch"),
        ("hi!", None),
        ("what is the capital of Italy?", None),
        ("thanks, that's all", None),
    ],
)
async def test_requests_route_to_the_tool_they_need_or_to_an_answer(
    builtin_tools: list[ToolDefinition], request_text: str, tool: str | None
) -> None:
    assert Router(builtin_tools).route(request_text).tool == tool


async def test_a_new_tool_is_found_by_its_name_and_description_alone(
    builtin_tools: list[ToolDefinition],
) -> None:
    """An MCP tool with no worked examples: its own words are enough."""
    router = Router([*builtin_tools, WEATHER])
    assert router.route("what's the weather forecast for Oslo?").tool == "get_forecast"
    assert router.route("will there be rain and wind in Paris?").tool == "get_forecast"
    assert not router.examples_for("get_forecast", "forecast", 3)


async def test_examples_of_tools_not_offered_are_never_routed_to() -> None:
    """Without Google configured, no request is routed to a Gmail tool."""
    router = Router([WEATHER])
    assert router.route("check my mail").tool is None
    assert {e.tool for e in router.examples} <= {None, "get_forecast"}


def test_without_answer_a_tool_is_always_chosen() -> None:
    router = Router([WEATHER])
    assert router.route("hello").tool is None
    assert router.route("hello", allow_answer=False).tool == "get_forecast"


def test_the_closest_examples_come_last() -> None:
    examples = [
        Example("show my notes tagged work", "list_notes", {"tag": "work"}),
        Example("what notes do I have?", "list_notes", {}),
        Example("hello", None),
    ]
    note = ToolDefinition(name="list_notes", description="List notes.")
    router = Router([note], examples)
    assert [e.request for e in router.examples_for("list_notes", "notes tagged home", 2)] == [
        "what notes do I have?",
        "show my notes tagged work",
    ]


def test_terms_keep_intent_words_and_mark_value_shapes() -> None:
    assert terms("Fetch https://example.com/a and email bob@example.com about notes.md") == [
        "fetch",
        "email",
        "<url>",
        "<email>",
        "<file>",
    ]
    assert terms("What are the 3 newest emails?") == ["newest", "email"]


def test_every_worked_example_names_a_builtin_tool_and_its_parameters(
    builtin_tools: list[ToolDefinition],
) -> None:
    """The examples file is data the router trusts: a typo in it would silently drop a route."""
    params = {
        t.name: set((t.parameters_json_schema or {}).get("properties") or {}) for t in builtin_tools
    }
    for example in builtin_examples():
        assert example.tool is None or example.tool in params, example
        if example.tool is not None:
            assert set(example.args) <= params[example.tool], example
    assert {e.tool for e in builtin_examples() if e.tool} == set(params)
