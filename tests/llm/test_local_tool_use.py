"""The embedded model uses tools, through the real llama.cpp server and the real approval path.

What these assert holds whatever a small model picks: what it writes is held to the options
and to the tool's schema, and the approval path treats its calls like any other. Tests of the
path itself pin `local_tool_choice = "retrieval"` so the tool is known in advance; how well
the model chooses is the eval's business (docs/local-model.md), not a test's."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

from co_tui.agent.build import build_agent
from co_tui.context.deps import create_deps
from co_tui.evals.runner import tool_definitions
from co_tui.llm import resolve_model
from co_tui.llm.local import server as local_server
from co_tui.llm.local.provider import LocalModel
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.turn.runner import TurnResult, run_turn
from tests.llm.conftest import local_settings

pytestmark = [pytest.mark.llm, pytest.mark.usefixtures("allow_model_requests")]

FILES = ("budget.csv", "notes.txt", "plan.md")


async def greedy_turn(
    workspace: Path, prompt: str, *decisions: ApprovalDecision
) -> tuple[TurnResult, RecordingFrontend]:
    """One turn of the embedded model (greedy: the same answer every run) in `workspace`,
    the user deciding each approval in turn."""
    settings = local_settings(workspace, temperature=0.0, local_tool_choice="retrieval")
    bundle = build_agent(settings)
    sandbox = SandboxChoice(SubprocessSandbox(workspace), "test sandbox")
    deps = create_deps(settings, workspace, sandbox_choice=sandbox)
    frontend = RecordingFrontend(list(decisions))
    result = await run_turn(
        bundle.agent,
        prompt,
        deps=deps,
        history=[],
        frontend=frontend,
        model_settings=bundle.model_settings,
    )
    return result, frontend


async def test_run_ls_is_asked_for_then_answered_from_its_output(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    for name in FILES:
        (tmp_path / name).write_text("x\n")
    result, frontend = await greedy_turn(tmp_path, "run the command ls", ApprovalDecision.APPROVE)

    assert result.error is None, result.error
    (request,) = frontend.approval_requests  # asked like any other call, once
    assert request.tool_name == "run_shell_command"
    assert request.args["cmd"].split()[0] == "ls", request.args
    (tool_result,) = frontend.of("tool_result")
    assert all(name in str(tool_result.content) for name in FILES)
    # the model answers after the result (whether it quotes the output is the eval's business:
    # with "list the files here" it did, with "run the command ls" SmolLM2 rambles)
    assert (result.output or "").strip()


async def test_a_denied_call_is_not_run_and_the_model_answers(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    prompt = "run the command touch made-by-the-model"
    result, frontend = await greedy_turn(tmp_path, prompt, ApprovalDecision.DENY)

    assert result.error is None, result.error
    (request,) = frontend.approval_requests
    assert request.tool_name == "run_shell_command"
    # Not run, whatever command the model wrote (its arguments are the eval's business).
    (shown,) = frontend.of("tool_result")
    assert shown.status == "denied"
    assert not (tmp_path / "made-by-the-model").exists()
    assert (result.output or "").strip()


async def test_every_builtin_tool_gets_arguments_that_fit_its_schema(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    """For each tool (the only one offered, and a call required), a request made of its own
    description: llama.cpp accepts the schema, and the model's arguments are a JSON object
    with the required parameters and no others."""
    settings = local_settings(tmp_path, temperature=0.0)
    bundle = build_agent(settings, all_approval=True)
    tools = await tool_definitions(bundle.agent, create_deps(settings, tmp_path))
    model = resolve_model(settings).model
    assert isinstance(model, LocalModel)
    for name, tool in tools.items():
        request = f"Please {(tool.description or name).splitlines()[0].lower()}"
        messages = [ModelRequest(parts=[UserPromptPart(request)])]
        params = ModelRequestParameters(function_tools=[tool], allow_text_output=False)
        response = await model.request(messages, {"temperature": 0.0}, params)
        (call,) = response.parts
        assert isinstance(call, ToolCallPart), (request, call)
        assert call.tool_name == name, request
        args = call.args_as_dict()
        schema = tool.parameters_json_schema or {}
        assert set(schema.get("required", [])) <= set(args) <= set(schema["properties"]), args


async def test_the_models_pick_is_one_of_its_options(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    """When the model chooses (the default for models other than SmolLM2): whatever it picks
    is an offered tool, with arguments that fit it, or a text answer; never a tool outside the
    shortlist."""
    settings = local_settings(tmp_path, temperature=0.0, local_tool_choice="model")
    bundle = build_agent(settings, all_approval=True, every_tool=True)
    tools = await tool_definitions(bundle.agent, create_deps(settings, tmp_path))
    model = resolve_model(settings).model
    assert isinstance(model, LocalModel) and model.tool_choice == "model"
    offered = [tools["search_notes"], tools["web_search"]]
    for request in ("Search my notes for the boiler manual", "Hi there", "Look up Oslo online"):
        messages = [ModelRequest(parts=[UserPromptPart(request)])]
        params = ModelRequestParameters(function_tools=offered, allow_text_output=True)
        response = await model.request(messages, {"temperature": 0.0}, params)
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if calls:
            (call,) = calls
            assert call.tool_name in {"search_notes", "web_search"}
            assert "query" in call.args_as_dict()
        else:
            assert response.text and response.text.strip()


async def test_a_tool_never_seen_is_called_through_its_schema(
    shared_server: local_server.Endpoint,
) -> None:
    """A tool co-tui has never seen (as an MCP server would add): no code, no examples. When
    a call is due, its arguments come from its schema alone."""
    model = resolve_model(local_settings(Path("."), temperature=0.0)).model
    assert isinstance(model, LocalModel)
    forecast = ToolDefinition(
        name="get_forecast",
        description="Weather forecast for a city: temperature, rain and wind for the coming days.",
        parameters_json_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    )
    messages = [ModelRequest(parts=[UserPromptPart("What's the weather forecast for Oslo?")])]
    params = ModelRequestParameters(function_tools=[forecast], allow_text_output=False)
    response = await model.request(messages, {"temperature": 0.0}, params)
    (call,) = response.parts
    assert isinstance(call, ToolCallPart) and call.tool_name == "get_forecast"
    args = call.args_as_dict()
    assert set(args) == {"city"} and isinstance(args["city"], str) and args["city"].strip()


async def test_arguments_that_loop_stop_early_and_come_back_closed(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    """SmolLM2 writes ids like "4KmN-budget-file-id-4KmN-budget-file-id-…" until its string
    bound (1,000 characters, hundreds of tokens). The request stops once the value loops,
    and the call comes back as JSON with the loop once: short, counted, never unparsed."""
    settings = local_settings(tmp_path, temperature=0.0)
    bundle = build_agent(settings, all_approval=True, every_tool=True)
    tools = await tool_definitions(bundle.agent, create_deps(settings, tmp_path))
    model = resolve_model(settings).model
    assert isinstance(model, LocalModel)
    asked = [
        ("read_drive_file", "Open the Drive file with id 4KmN-budget"),
        ("read_drive_file", "Show me Drive document 0B9_qrsTUV"),
        ("get_slack_channel_history", "Show the last messages in #hardware"),
    ]
    for name, request in asked:
        messages = [ModelRequest(parts=[UserPromptPart(request)])]
        params = ModelRequestParameters(function_tools=[tools[name]], allow_text_output=False)
        response = await model.request(messages, {"temperature": 0.0}, params)
        (call,) = response.parts
        assert isinstance(call, ToolCallPart) and call.tool_name == name, request
        args = call.args_as_dict()  # JSON, even where the engine was stopped mid-value
        assert all(len(str(value)) < 200 for value in args.values()), (request, args)
        assert 0 < response.usage.output_tokens < 200, (request, response.usage)
