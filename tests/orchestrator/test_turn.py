"""run_turn: event order, approvals, budget, interrupts — driven by scripted models."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart

from co_tui.config.settings import Settings
from co_tui.protocol.frontend import DENIED_MESSAGE, ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, Think, make_bundle, make_deps, tool_returns

APPROVE, DENY, ALL = ApprovalDecision.APPROVE, ApprovalDecision.DENY, ApprovalDecision.APPROVE_ALL


def shell(cmd: str, id: str) -> Call:
    return Call("run_shell_command", {"cmd": cmd}, id)


async def turn(model: ScriptedModel, deps, frontend, prompt="go", history=(), **kw):
    bundle = make_bundle(model.model)
    return await run_turn(
        bundle.agent, prompt, deps=deps, history=list(history), frontend=frontend, **kw
    )


async def test_thinking_text_and_tool_events_have_explicit_boundaries(tmp_path: Path) -> None:
    model = ScriptedModel(
        [Think("let me see"), "I will ", "list files.", shell("echo hello", "c1")],
        ["It said ", "hello."],
    )
    frontend = RecordingFrontend([APPROVE])
    result = await turn(model, make_deps(tmp_path), frontend)

    names = [n for n in frontend.names() if n != "usage"]
    assert names == [
        "turn_start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",  # committed before the tool event
        "tool_call",
        "prompt_approval",
        "approval",
        "tool_output",  # the command's output as it ran
        "tool_result",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "response_complete",
        "turn_end",
    ]
    assert [e.content for e in frontend.of("text_end")] == ["I will list files.", "It said hello."]
    assert [e.content for e in frontend.of("thinking_end")] == ["let me see"]
    (call,) = frontend.of("tool_call")
    assert (call.tool_name, call.key_arg) == ("run_shell_command", "echo hello")
    (res,) = frontend.of("tool_result")
    assert (res.status, res.content) == ("ok", "hello")
    assert result.output == "It said hello."
    assert result.ok and result.usage.requests == 2
    assert frontend.of("usage")[-1].requests == 2
    assert {e.session_id for e in frontend.events} == {result_session(frontend)}


def result_session(frontend: RecordingFrontend) -> str:
    return frontend.events[0].session_id


async def test_tool_call_event_is_not_repeated_on_resume(tmp_path: Path) -> None:
    model = ScriptedModel([shell("echo a", "c1")], ["fine"])
    frontend = RecordingFrontend([APPROVE])
    await turn(model, make_deps(tmp_path), frontend)
    assert len(frontend.of("tool_call")) == 1
    assert len(frontend.of("tool_result")) == 1


async def test_chained_approvals_each_get_their_own_decision(tmp_path: Path) -> None:
    model = ScriptedModel(
        [shell("echo one > one.txt", "c1")],
        [shell("echo two > two.txt", "c2")],
        ["both written"],
    )
    frontend = RecordingFrontend([APPROVE, APPROVE])
    result = await turn(model, make_deps(tmp_path), frontend)
    assert [r.tool_call_id for r in frontend.approval_requests] == ["c1", "c2"]
    assert (tmp_path / "one.txt").read_text() == "one\n"
    assert (tmp_path / "two.txt").read_text() == "two\n"
    assert result.output == "both written"


async def test_denial_reaches_the_model_and_nothing_runs(tmp_path: Path) -> None:
    model = ScriptedModel([shell("touch should-not-exist", "c1")], ["ok, I won't"])
    frontend = RecordingFrontend([DENY])
    result = await turn(model, make_deps(tmp_path), frontend)
    assert not (tmp_path / "should-not-exist").exists()
    (denied,) = tool_returns(model.seen[-1])
    assert denied.content == DENIED_MESSAGE
    assert denied.outcome == "denied"
    assert frontend.of("tool_result")[0].status == "denied"
    assert result.approvals[0].decision == "deny"


async def test_several_calls_in_one_response_are_asked_one_by_one(tmp_path: Path) -> None:
    model = ScriptedModel(
        [shell("echo 1 > a", "c1"), shell("echo 2 > b", "c2"), shell("echo 3 > c", "c3")],
        ["done"],
    )
    frontend = RecordingFrontend([APPROVE, DENY, APPROVE])
    await turn(model, make_deps(tmp_path), frontend)
    assert [(r.index, r.total) for r in frontend.approval_requests] == [(1, 3), (2, 3), (3, 3)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "c"]


async def test_approve_all_sets_session_yolo(tmp_path: Path) -> None:
    deps = make_deps(tmp_path)
    model = ScriptedModel(
        [shell("echo 1 > a", "c1"), shell("echo 2 > b", "c2")],
        ["done"],
    )
    frontend = RecordingFrontend([ALL])
    await turn(model, deps, frontend)
    assert deps.auto_confirm is True
    assert len(frontend.approval_requests) == 1  # the second call of the batch did not ask
    later = ScriptedModel([shell("echo 3 > c", "c3")], ["done"])
    await turn(later, deps, frontend)
    assert len(frontend.approval_requests) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]


async def test_safe_command_auto_approves_only_in_an_isolating_sandbox(tmp_path: Path) -> None:
    for isolation, expected_prompts in (("none", 1), ("namespace", 0)):
        model = ScriptedModel([shell("ls", "c1")], ["listed"])
        frontend = RecordingFrontend([APPROVE])
        await turn(model, make_deps(tmp_path, isolation=isolation), frontend)
        assert len(frontend.approval_requests) == expected_prompts, isolation
    # An operator always asks, whatever the isolation.
    model = ScriptedModel([shell("ls; rm -rf x", "c1")], ["ok"])
    frontend = RecordingFrontend([DENY])
    await turn(model, make_deps(tmp_path, isolation="full"), frontend)
    assert len(frontend.approval_requests) == 1


async def test_budget_is_shared_across_approval_hops(tmp_path: Path) -> None:
    # Five hops of one call each would need six requests; the limit is three for the turn.
    model = ScriptedModel(*[[shell(f"echo {i}", f"c{i}")] for i in range(5)], ["never"])
    frontend = RecordingFrontend(lambda _req: APPROVE)
    result = await turn(model, make_deps(tmp_path), frontend, request_limit=3)
    assert result.error is not None and "limit of 3" in result.error
    assert result.usage.requests == 3
    assert len(frontend.approval_requests) == 3
    assert frontend.of("error")


async def test_cancel_mid_stream_returns_partial_history_that_the_next_turn_accepts(
    tmp_path: Path,
) -> None:
    started = asyncio.Event()

    async def slow():
        for i in range(200):
            if i == 3:
                started.set()
            await asyncio.sleep(0.01)
            yield f"w{i} "

    from pydantic_ai.models.function import FunctionModel

    async def stream(messages, info):
        async for chunk in slow():
            yield chunk

    deps = make_deps(tmp_path)
    frontend = RecordingFrontend()
    bundle = make_bundle(FunctionModel(stream_function=stream))
    task = asyncio.create_task(
        run_turn(bundle.agent, "long answer", deps=deps, history=[], frontend=frontend)
    )
    await started.wait()
    task.cancel()
    result = await task
    assert result.interrupted
    assert [e.interrupted for e in frontend.of("turn_end")] == [True]
    assert frontend.names().count("text_start") == frontend.names().count("text_end") == 1
    last = result.messages[-1]
    assert isinstance(last, ModelResponse) and last.state == "interrupted"
    assert result.streamed_text.startswith("w0 w1 w2")

    follow = ScriptedModel(["still here"])
    again = await turn(follow, deps, RecordingFrontend(), history=result.messages)
    assert again.output == "still here"


async def test_cancel_while_awaiting_approval_patches_the_dangling_call(tmp_path: Path) -> None:
    asked = asyncio.Event()

    class Hanging(RecordingFrontend):
        async def prompt_approval(self, request):
            asked.set()
            await asyncio.Event().wait()  # the user never answers

    deps = make_deps(tmp_path)
    model = ScriptedModel([shell("touch nope", "c1")])
    bundle = make_bundle(model.model)
    task = asyncio.create_task(
        run_turn(bundle.agent, "go", deps=deps, history=[], frontend=Hanging())
    )
    await asked.wait()
    task.cancel()
    result = await task
    assert result.interrupted
    assert not (tmp_path / "nope").exists()
    (ret,) = tool_returns(result.messages)
    assert ret.tool_call_id == "c1" and "Interrupted" in str(ret.content)
    follow = ScriptedModel(["next turn works"])
    again = await turn(follow, deps, RecordingFrontend(), history=result.messages)
    assert again.output == "next turn works"


async def test_a_failing_tool_is_reported_and_the_turn_survives(tmp_path: Path) -> None:
    model = ScriptedModel([shell("exit 3", "c1")], ["the command failed"])
    frontend = RecordingFrontend([APPROVE])
    result = await turn(model, make_deps(tmp_path), frontend)
    (res,) = frontend.of("tool_result")
    assert res.status == "failed" and "exit code 3" in res.content
    assert result.ok and result.output == "the command failed"


async def test_a_crashing_model_is_an_error_not_an_exception(tmp_path: Path) -> None:
    from pydantic_ai.models.function import FunctionModel

    async def broken(messages, info):
        raise RuntimeError("model exploded")
        yield ""  # pragma: no cover

    frontend = RecordingFrontend()
    bundle = make_bundle(FunctionModel(stream_function=broken))
    result = await run_turn(
        bundle.agent, "hi", deps=make_deps(tmp_path), history=[], frontend=frontend
    )
    assert result.error and "model exploded" in result.error
    assert frontend.of("error") and [e.interrupted for e in frontend.of("turn_end")] == [False]


@pytest.mark.parametrize("args", [{"cmd": "echo 'it''s' \"$HOME\" `x`\nline2 ünïcødé"}])
async def test_the_arguments_executed_are_the_arguments_shown(tmp_path: Path, args) -> None:
    model = ScriptedModel([Call("run_shell_command", args, "c1")], ["ok"])
    frontend = RecordingFrontend([APPROVE])
    result = await turn(model, make_deps(tmp_path, Settings()), frontend)
    (request,) = frontend.approval_requests
    assert request.args == args
    assert result.approvals[0].args_hash == request.args_hash
    response = next(m for m in result.messages if isinstance(m, ModelResponse))
    call = next(p for p in response.parts if isinstance(p, ToolCallPart))
    assert call.args_as_dict() == args
