"""The embedded model over real HTTP from a real llama.cpp server, through run_turn."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.agent.build import build_agent
from co_tui.context.deps import create_deps
from co_tui.llm import resolve_model
from co_tui.llm.local import server as local_server
from co_tui.llm.local.provider import LocalModel
from co_tui.llm.local.repetition import repeated_tail, repeats_to_stop
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.llm.conftest import local_settings

pytestmark = [pytest.mark.llm, pytest.mark.usefixtures("allow_model_requests")]


async def test_streamed_answer_arrives_through_run_turn(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    settings = local_settings(tmp_path)
    bundle = build_agent(settings)
    assert bundle.resolved is not None and bundle.resolved.provider == "local"
    deps = create_deps(settings, tmp_path)
    frontend = RecordingFrontend()

    result = await run_turn(
        bundle.agent, "What colour is the sky?", deps=deps, history=[], frontend=frontend,
        model_settings=bundle.model_settings,
    )  # fmt: skip

    assert result.ok, result.error
    assert result.output and result.output.strip()
    names = frontend.names()
    assert names[0] == "turn_start" and names[-1] == "turn_end"
    assert names.index("text_start") < names.index("text_delta") < names.index("text_end")
    assert len(frontend.of("text_delta")) > 1, "the answer should stream in pieces"
    assert frontend.text().strip() == result.output.strip()
    # It came from the shared server, which is still the one running.
    assert local_server.running_endpoint() == shared_server


async def test_tool_prompt_reaches_approval_or_answers_in_text(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    settings = local_settings(tmp_path)
    bundle = build_agent(settings)
    deps = create_deps(settings, tmp_path)
    frontend = RecordingFrontend([ApprovalDecision.DENY] * 5)

    result = await run_turn(
        bundle.agent, "run the shell command ls", deps=deps, history=[], frontend=frontend,
        model_settings=bundle.model_settings,
    )  # fmt: skip

    assert result.error is None, result.error
    assert not frontend.of("error")
    if frontend.approval_requests:
        request = frontend.approval_requests[0]
        assert request.tool_name in bundle.tool_names
        assert isinstance(request.args, dict)
    else:
        assert result.output and result.output.strip()
    # SmolLM2 tends to repeat "The user denied this action." (or, on other CPUs, a run of
    # " -sL -o curl") after a denial: the answer stops once the loop is caught (four repeats,
    # or 120 characters of a short piece) instead of running to the token cap (25 s). The
    # piece may have been cut mid-way when the loop began, hence one more.
    loop = repeated_tail(result.output or "")
    assert loop is None or (result.output or "").count(loop) <= repeats_to_stop(loop) + 1, (
        result.output
    )
    print(  # what the model did, for the report (pytest -s)
        "approvals:",
        [(r.tool_name, r.args) for r in frontend.approval_requests],
        "answer:",
        repr(result.output),
    )


class Colour(BaseModel):
    name: Literal["red", "orange", "yellow", "green", "blue", "purple", "grey"]


async def test_forced_tool_call_is_well_formed(shared_server: local_server.Endpoint) -> None:
    """With no text allowed (tool output), the grammar makes the model write a valid call:
    this exercises the call path (stream -> ToolCallPart -> validated args) end to end."""
    resolved = resolve_model(local_settings(Path(".")))
    assert isinstance(resolved.model, LocalModel)
    agent = Agent(resolved.model, output_type=Colour, instructions="Answer with a colour.")

    async with agent.run_stream_events("What colour is the sky?") as events:
        results = [e.result async for e in events if hasattr(e, "result")]

    assert len(results) == 1 and isinstance(results[0].output, Colour)
    # The same without streaming (Model.request).
    result = await agent.run("Name one colour of grass.")
    assert isinstance(result.output, Colour)
    # The first reply is already the call: no prose answer sent back for a retry (a run's
    # first request leaves the output mode "auto"; read as "text allowed", the model answered
    # in prose, and a long answer ended the run with OutputTokenLimitExceeded).
    for run in (results[0], result):
        first_reply = run.all_messages()[1]
        assert isinstance(first_reply, ModelResponse)
        assert [type(p) for p in first_reply.parts] == [ToolCallPart], first_reply
    print("forced calls:", results[0].output, result.output)


async def test_a_history_with_tool_calls_and_results_is_understood(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    """Tool calls and results from earlier turns reach the server as plain chat."""
    history = [
        ModelRequest(parts=[UserPromptPart("run the shell command ls")]),
        ModelResponse(parts=[ToolCallPart("run_shell_command", {"cmd": "ls"}, "call_1")]),
        ModelRequest(parts=[ToolReturnPart("run_shell_command", "notes.txt\nplan.md", "call_1")]),
        ModelResponse(parts=[TextPart("There are two files: notes.txt and plan.md.")]),
    ]
    settings = local_settings(tmp_path)
    bundle = build_agent(settings)
    frontend = RecordingFrontend()

    result = await run_turn(
        bundle.agent, "How many files were there?", deps=create_deps(settings, tmp_path),
        history=history, frontend=frontend, model_settings=bundle.model_settings,
    )  # fmt: skip

    assert result.error is None, result.error
    assert (result.output or "").strip() or frontend.approval_requests
