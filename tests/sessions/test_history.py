"""History processors on crafted histories, the overflow retry over HTTP, and /compact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui import commands
from co_tui.agent import build_agent
from co_tui.config import Settings
from co_tui.history import (
    MARKER_TEXT,
    SUMMARY_PREFIX,
    SlidingWindow,
    approx_tokens,
    is_summary,
    trim_old_tool_output,
    window_split,
)
from co_tui.orchestrator.recording import RecordingFrontend
from co_tui.orchestrator.turn import run_turn
from tests.helpers import ScriptedModel, make_deps
from tests.servers.fake_openai import error, serve, text


def user(text_: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(content=text_)])


def answer(text_: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(content=text_)])


def call(name: str, call_id: str) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool_name=name, args={"q": call_id},
                                             tool_call_id=call_id)])  # fmt: skip


def ret(name: str, call_id: str, content: Any) -> ModelRequest:
    return ModelRequest(parts=[ToolReturnPart(tool_name=name, content=content,
                                              tool_call_id=call_id)])  # fmt: skip


def tool_turn(n: int, output: Any = "x" * 10) -> list[ModelMessage]:
    """user → call → return → answer: four messages."""
    return [
        user(f"q{n}"),
        call("search_notes", f"c{n}"),
        ret("search_notes", f"c{n}", output),
        answer(f"a{n}"),
    ]


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, ToolReturnPart)]  # fmt: skip


def assert_pairs_valid(messages: list[ModelMessage]) -> None:
    """Every return answers a call made earlier in the list; every call is answered."""
    calls: set[str] = set()
    answered: set[str] = set()
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                calls.add(p.tool_call_id)
            elif isinstance(p, ToolReturnPart) or (isinstance(p, RetryPromptPart) and p.tool_name):
                assert p.tool_call_id in calls, f"orphaned return {p.tool_call_id}"
                answered.add(p.tool_call_id)
    assert calls == answered


def summariser(reply: str | Exception) -> tuple[FunctionModel, list[str]]:
    prompts: list[str] = []

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts.append(str(messages[-1].parts[-1].content))  # type: ignore[union-attr]
        if isinstance(reply, Exception):
            raise reply
        return answer(reply)

    return FunctionModel(function=fn, model_name="summariser"), prompts


# -- trim_old_tool_output -------------------------------------------------------------------


def test_trim_cuts_old_returns_keeping_name_and_id() -> None:
    history = [*tool_turn(1, "a" * 5000), *tool_turn(2, {"rows": ["b" * 100] * 60}),
               *tool_turn(3, "c" * 5000)]  # fmt: skip
    out = trim_old_tool_output(history, 500)
    old1, old2, current = returns(out)
    assert (old1.tool_name, old1.tool_call_id) == ("search_notes", "c1")
    assert (old2.tool_name, old2.tool_call_id) == ("search_notes", "c2")
    assert len(old1.content) == 500 and "trimmed" in old1.content
    assert len(old2.content) == 500 and old2.content.startswith('{"rows"')
    assert current.content == "c" * 5000  # the current turn is untouched
    assert trim_old_tool_output(out, 500) == out  # idempotent
    assert history[2].parts[0].content == "a" * 5000  # the input is not mutated


def test_trim_leaves_short_returns_as_they_are() -> None:
    history = [*tool_turn(1, "short"), *tool_turn(2)]
    out = trim_old_tool_output(history, 500)
    assert all(a is b for a, b in zip(out, history, strict=True))


# -- sliding_window ---------------------------------------------------------------------------


async def run_window(
    history: list[ModelMessage], max_messages: int, reply: str | Exception = "SUMMARY"
) -> tuple[list[ModelMessage], list[str]]:
    model, prompts = summariser(reply)
    window = SlidingWindow(max_messages, model)

    class Ctx:
        deps = None

    return await window(Ctx(), history), prompts  # type: ignore[arg-type]


async def test_window_under_the_limit_is_untouched() -> None:
    history = [m for n in range(3) for m in tool_turn(n)]
    out, prompts = await run_window(history, 40)
    assert out is history and prompts == []


async def test_window_keeps_head_and_tail_and_summarises_the_middle() -> None:
    history = [m for n in range(20) for m in tool_turn(n)] + [user("now")]
    out, prompts = await run_window(history, 20)
    assert out[:4] == history[:4]  # the first exchange
    summary = next(m for m in out if is_summary(m))
    assert summary.parts[0].content == SUMMARY_PREFIX + "SUMMARY"
    assert out[-1] == history[-1]
    assert len(out) <= 4 + 1 + 20 // 2 + 3  # head, summary, tail (moved to a turn start)
    assert "User: q5" in prompts[0] and "Tool search_notes returned" in prompts[0]
    assert "q0" not in prompts[0]  # the head is kept, not summarised
    assert_pairs_valid(out)


@pytest.mark.parametrize("max_messages", range(4, 30))
async def test_window_never_splits_a_call_from_its_return(max_messages: int) -> None:
    # Turns with several tool hops, so many cut points land inside a turn.
    history: list[ModelMessage] = []
    for n in range(12):
        history.append(user(f"q{n}"))
        for k in range(n % 3 + 1):
            cid = f"c{n}-{k}"
            history += [call("search_notes", cid), ret("search_notes", cid, "r")]
        history.append(answer(f"a{n}"))
    history.append(user("last"))
    out, _ = await run_window(history, max_messages)
    assert_pairs_valid(out)
    assert out[-1] == history[-1]
    assert len(out) < len(history)


async def test_window_falls_back_to_a_marker_when_summarising_fails() -> None:
    history = [m for n in range(20) for m in tool_turn(n)] + [user("now")]
    out, prompts = await run_window(history, 20, RuntimeError("model down"))
    assert prompts  # it tried
    marker = [m for m in out if isinstance(m, ModelRequest) and any(
        isinstance(p, UserPromptPart) and "could not be summarised" in str(p.content)
        for p in m.parts)]  # fmt: skip
    assert len(marker) == 1
    split = window_split(history, 20)
    assert split is not None
    assert marker[0].parts[0].content == MARKER_TEXT.format(count=split[1] - split[0])
    assert_pairs_valid(out)


async def test_agent_runs_the_processors_and_stores_the_compacted_history(tmp_path: Path) -> None:
    scripted = ScriptedModel()
    model, prompts = summariser("the story so far")
    settings = Settings(max_history_messages=10, tool_output_trim_chars=100)
    bundle = build_agent(settings, model=scripted.model, instructions="t", summarizer=model)
    history = [m for n in range(6) for m in tool_turn(n, "z" * 1000)]
    result = await run_turn(bundle.agent, "next", deps=make_deps(tmp_path), history=history,
                            frontend=RecordingFrontend())  # fmt: skip
    assert result.ok and len(prompts) == 1
    seen = scripted.seen[0]
    assert any(is_summary(m) for m in seen) and len(seen) < len(history)
    assert all(len(str(p.content)) <= 100 for p in returns(seen))
    assert any(is_summary(m) for m in result.messages)  # what is stored is what was sent
    assert_pairs_valid(result.messages)


# -- context window exceeded: compact once, retry ----------------------------------------------


@pytest.mark.usefixtures("allow_model_requests")
async def test_context_window_error_compacts_once_and_retries(tmp_path: Path) -> None:
    script = [error(400, "maximum context length exceeded", code="context_length_exceeded"),
              text("fits now")]  # fmt: skip
    with serve(script) as server:
        settings = Settings(llm_provider="ollama", ollama_host=server.url, ollama_model="fake")
        model, prompts = summariser("compacted summary")
        bundle = build_agent(settings, summarizer=model)
        history = [m for n in range(5) for m in tool_turn(n, "big " * 300)]
        frontend = RecordingFrontend()
        deps = make_deps(tmp_path)
        result = await run_turn(
            bundle.agent, "latest question", deps=deps, history=history, frontend=frontend,
            model_settings=bundle.model_settings,
        )  # fmt: skip
        bodies = [r.body for r in server.requests]
    assert result.ok and result.output == "fits now"
    assert len(bodies) == 2 and len(prompts) == 1
    retried = str(bodies[1]["messages"])
    assert "compacted summary" in retried and "latest question" in retried
    assert "q1" not in retried and "big big" not in retried
    assert len(bodies[1]["messages"]) < len(bodies[0]["messages"])
    assert any("compacting" in s.message for s in frontend.of("status"))
    assert not deps.compact_next_request


@pytest.mark.usefixtures("allow_model_requests")
async def test_a_second_context_window_error_aborts(tmp_path: Path) -> None:
    overflow = error(400, "too long", code="context_length_exceeded")
    with serve([overflow, overflow, text("never")]) as server:
        settings = Settings(llm_provider="ollama", ollama_host=server.url, ollama_model="fake")
        bundle = build_agent(settings, summarizer=summariser("s")[0])
        result = await run_turn(bundle.agent, "q", deps=make_deps(tmp_path), history=tool_turn(1),
                                frontend=RecordingFrontend())  # fmt: skip
        assert len(server.requests) == 2
    assert result.error and "too long" in result.error


# -- /compact -------------------------------------------------------------------------------


async def test_compact_command_summarises_and_reports_savings(tmp_path: Path) -> None:
    model, prompts = summariser("We talked about q0..q9.")
    bundle = build_agent(Settings(), model=ScriptedModel().model, instructions="t",
                         summarizer=model)  # fmt: skip
    history = [m for n in range(10) for m in tool_turn(n, "output " * 200)]
    shown: list[object] = []
    ctx = commands.CommandContext(history, make_deps(tmp_path), bundle, Settings(), shown.append)
    outcome = await commands.dispatch(ctx, "/compact the tool outputs")
    assert outcome.known and outcome.history is not None
    new = outcome.history
    assert len(new) == 2 and is_summary(new[0]) and isinstance(new[1], ModelResponse)
    assert "We talked about q0..q9." in new[0].parts[0].content
    assert "Pay particular attention to: the tool outputs" in prompts[0]
    before, after = approx_tokens(history), approx_tokens(new)
    assert shown == [f"Compacted 40 message(s) into 2: about {before:,} → {after:,} tokens "
                     f"({before - after:,} saved)."]  # fmt: skip


async def test_compact_failure_keeps_the_history(tmp_path: Path) -> None:
    model, _ = summariser(RuntimeError("no model"))
    bundle = build_agent(Settings(), model=ScriptedModel().model, instructions="t",
                         summarizer=model)  # fmt: skip
    shown: list[object] = []
    ctx = commands.CommandContext(tool_turn(1), make_deps(tmp_path), bundle, Settings(),
                                  shown.append)  # fmt: skip
    outcome = await commands.dispatch(ctx, "/compact")
    assert outcome.history is None and "Could not compact" in str(shown[0])
