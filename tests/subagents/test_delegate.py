"""delegate through run_turn with a RecordingFrontend: concurrency, usage, cancellation."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from co_tui.config.settings import Settings
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, tool_returns
from tests.subagents.scripts import (
    ANSWER_A,
    ANSWER_B,
    PARENT_PROMPT,
    TASK_A,
    TASK_B,
    DelegatingScript,
    first_prompt,
)


def child_sessions(frontend: RecordingFrontend, parent: str) -> dict[str, str]:
    """{session_id: task} of every sub-agent that started."""
    return {e.session_id: e.prompt for e in frontend.of("turn_start") if e.session_id != parent}


async def test_two_concurrent_subagents_report_back(tmp_path: Path) -> None:
    script = DelegatingScript()
    bundle = make_bundle(script.model(), Settings())
    deps = make_deps(tmp_path)
    frontend = RecordingFrontend()
    result = await run_turn(bundle.agent, PARENT_PROMPT, deps=deps, history=[], frontend=frontend)
    assert result.ok, result.error
    parent = deps.session_id
    children = child_sessions(frontend, parent)
    assert sorted(children.values()) == [TASK_A, TASK_B]
    assert parent not in children and len(set(children)) == 2

    # Interleaved: both sub-agents started before either ended.
    names = [(e.type, e.session_id) for e in frontend.events]
    first_end = min(names.index(("turn_end", sid)) for sid in children)
    last_start = max(names.index(("turn_start", sid)) for sid in children)
    assert last_start < first_end

    # The children's answers reached the parent; its own text is only the parent's.
    assert result.output is not None
    assert result.output.startswith("Combined: ")
    assert ANSWER_A in result.output and ANSWER_B in result.output
    parent_text = "".join(e.content for e in frontend.of("text_delta") if e.session_id == parent)
    assert parent_text == "Let me ask two helpers. " + result.output
    child_text = "".join(e.content for e in frontend.of("text_delta") if e.session_id in children)
    assert ANSWER_A in child_text and ANSWER_B in child_text

    # The child's tool call is reported under its own session.
    child_a = next(sid for sid, task in children.items() if task == TASK_A)
    tool_calls = [(e.session_id, e.tool_name) for e in frontend.of("tool_call")]
    assert (child_a, "list_memories") in tool_calls
    assert (parent, "delegate") in tool_calls

    # One budget: parent 2 requests + child A 2 + child B 1.
    assert script.parent_requests == 2
    assert result.usage.requests == 5
    child_usage = {e.session_id: e for e in frontend.of("usage") if e.session_id in children}
    assert child_usage[child_a].requests == 2
    parent_usage = [e for e in frontend.of("usage") if e.session_id == parent][-1]
    total_child_tokens = sum(u.input_tokens + u.output_tokens for u in child_usage.values())
    assert parent_usage.input_tokens + parent_usage.output_tokens > total_child_tokens > 0
    assert all(e.interrupted is False for e in frontend.of("turn_end"))


async def test_cancel_stops_both_subagents(tmp_path: Path) -> None:
    script = DelegatingScript(block=True)
    bundle = make_bundle(script.model(), Settings())
    deps = make_deps(tmp_path)
    frontend = RecordingFrontend()
    before = {t for t in asyncio.all_tasks() if not t.done()}
    turn = asyncio.create_task(
        run_turn(bundle.agent, PARENT_PROMPT, deps=deps, history=[], frontend=frontend)
    )
    await asyncio.wait_for(script.both_started.wait(), 10)
    for _ in range(500):  # both sub-agents are streaming their (never-ending) answers
        if script.blocked == 2:
            break
        await asyncio.sleep(0.01)
    assert script.blocked == 2 and script.active == 2
    turn.cancel()
    result = await asyncio.wait_for(turn, 10)
    assert result.interrupted
    assert script.active == 0 and script.cancelled == 2
    children = child_sessions(frontend, deps.session_id)
    ends = {e.session_id: e.interrupted for e in frontend.of("turn_end")}
    assert all(ends[sid] is True for sid in children)
    left = {t for t in asyncio.all_tasks() if not t.done()} - before - {asyncio.current_task()}
    assert not left, left
    # The parent's history is usable: the delegate calls are closed off.
    assert result.messages


async def test_side_effect_tool_is_refused_with_a_retry(tmp_path: Path) -> None:
    scripted = ScriptedModel(
        [Call("delegate", {"task": "x", "tools": ["run_shell_command"]}, "d1")], ["gave up"]
    )
    bundle = make_bundle(scripted.model, Settings())
    frontend = RecordingFrontend()
    deps = make_deps(tmp_path)
    result = await run_turn(bundle.agent, "go", deps=deps, history=[], frontend=frontend)
    retried = [p for p in tool_returns(result.messages) if p.outcome == "retried"]
    assert retried and "Not available to sub-agents: run_shell_command" in str(retried[0].content)
    assert "list_memories" in str(retried[0].content)
    assert "run_shell_command" not in str(retried[0].content).split("Choose from:")[1]
    assert "delegate" not in str(retried[0].content).split("Choose from:")[1]
    assert not child_sessions(frontend, deps.session_id)  # no sub-agent started


async def test_headless_prints_only_the_parents_text(tmp_path: Path) -> None:
    import io

    from co_tui.headless.frontend import HeadlessFrontend

    out, err = io.StringIO(), io.StringIO()
    frontend = HeadlessFrontend("text", out=out, err=err)
    bundle = make_bundle(DelegatingScript().model(), Settings())
    deps = make_deps(tmp_path)
    result = await run_turn(bundle.agent, PARENT_PROMPT, deps=deps, history=[], frontend=frontend)
    assert result.ok
    assert out.getvalue() == f"{result.output}\n"  # the final answer only
    assert frontend.usage is not None and frontend.usage.requests == 5


def delegate_results(frontend: RecordingFrontend, parent: str) -> list[Any]:
    return [
        e
        for e in frontend.of("tool_result")
        if e.session_id == parent and e.tool_name == "delegate"
    ]


async def test_each_subagents_report_shows_under_its_delegate_call(tmp_path: Path) -> None:
    bundle = make_bundle(DelegatingScript().model(), Settings())
    deps = make_deps(tmp_path)
    frontend = RecordingFrontend()
    result = await run_turn(bundle.agent, PARENT_PROMPT, deps=deps, history=[], frontend=frontend)
    assert result.ok, result.error
    shown = delegate_results(frontend, deps.session_id)
    assert len(shown) == 2 and all(e.status == "ok" for e in shown)
    assert all(e.display and e.display.startswith("sub-agent answered (") for e in shown)
    assert all(e.content == e.display for e in shown)


async def test_a_failed_subagent_shows_as_a_failed_call(tmp_path: Path) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if first_prompt(messages) == "look it up":  # the sub-agent: its provider fails
            raise RuntimeError("provider exploded")
        if tool_returns(messages):
            yield "carried on"
            return
        args = json.dumps({"task": "look it up"})
        yield {0: DeltaToolCall(name="delegate", json_args=args, tool_call_id="d1")}

    bundle = make_bundle(FunctionModel(stream_function=stream, model_name="fn"), Settings())
    deps = make_deps(tmp_path)
    frontend = RecordingFrontend()
    result = await run_turn(bundle.agent, "go", deps=deps, history=[], frontend=frontend)
    assert result.ok and result.output == "carried on"
    (shown,) = delegate_results(frontend, deps.session_id)
    assert shown.status == "failed"
    assert shown.display is not None and shown.display.startswith("sub-agent failed (")
    assert "RuntimeError: provider exploded" in shown.display
    (part,) = tool_returns(result.messages)
    assert part.content["error"] == "RuntimeError: provider exploded"  # what the model reads
