"""The context window: what the model is sent of a transcript that is never shortened.

Crafted histories for the split; real turns (FunctionModel) through ChatSession and a real
store for the bound, the append-only transcript, compactions on resume, a failing summariser,
the overflow retry over HTTP, and /compact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelHTTPError
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

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.summaries import SUMMARY_PREFIX, approx_tokens, is_summary, trim_old_tool_output
from co_tui.context.window import MARKER_TEXT, window_split
from co_tui.protocol.recording import RecordingFrontend
from co_tui.session import commands
from co_tui.session.chat import ChatSession
from co_tui.store.session_store import SessionStore
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_deps, user_prompts
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


def summariser(*replies: str | Exception) -> tuple[FunctionModel, list[str]]:
    """Answers with `replies` in turn (the last one for ever after)."""
    prompts: list[str] = []

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts.append(str(messages[-1].parts[-1].content))  # type: ignore[union-attr]
        reply = replies[min(len(prompts), len(replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        return answer(f"{reply} #{len(prompts)}")

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


# -- window_split ---------------------------------------------------------------------------


def hop_turns(count: int) -> list[ModelMessage]:
    """Turns with several tool hops, so many cut points land inside a turn."""
    history: list[ModelMessage] = []
    for n in range(count):
        history.append(user(f"q{n}"))
        for k in range(n % 3 + 1):
            cid = f"c{n}-{k}"
            history += [call("search_notes", cid), ret("search_notes", cid, "r")]
        history.append(answer(f"a{n}"))
    return history


def apply_split(history: list[ModelMessage], max_messages: int) -> list[ModelMessage]:
    split = window_split(history, max_messages)
    if split is None:
        return history
    head, tail = split
    return [*history[:head], user(SUMMARY_PREFIX + "s"), *history[tail:]]


def test_a_history_within_the_limit_is_not_split() -> None:
    assert window_split([m for n in range(3) for m in tool_turn(n)], 12) is None


@pytest.mark.parametrize("max_messages", range(4, 41))
def test_the_split_fits_the_limit_and_never_parts_a_call_from_its_return(
    max_messages: int,
) -> None:
    for length in range(max_messages + 1, max_messages + 40, 3):
        history = hop_turns(40)[:length]
        if isinstance(history[-1], ModelResponse):  # a request goes last: a return or a prompt
            history[-1] = user("next")
        out = apply_split(history, max_messages)
        assert len(out) <= max_messages, (max_messages, length)
        assert out[-1] is history[-1]
        assert_pairs_valid(out)


# -- real turns: the bound, the transcript, compactions -----------------------------------------


def tool_turn_script(n: int) -> list[list[Any]]:
    """One user turn: a tool call (list_memories runs without asking), then the answer."""
    return [[Call("list_memories", {}, f"m{n}")], [f"answer {n}"]]


def open_session(
    tmp_path: Path,
    scripted: ScriptedModel,
    summary_model: FunctionModel,
    resume: str | None = None,
    **settings: Any,
) -> ChatSession:
    from co_tui.agent.build import build_agent

    config = Settings(**settings)
    bundle = build_agent(config, model=scripted.model, instructions="t", summarizer=summary_model)
    session = ChatSession(
        config,
        workspace=tmp_path,
        store=SessionStore(tmp_path / "sessions.db"),
        bundle=bundle,
        deps=make_deps(tmp_path, config),
        frontend=RecordingFrontend(),
    )
    if resume is not None:
        session.open_stored(resume=resume)
    session.build()
    return session


@pytest.mark.parametrize("max_messages", [4, 5, 7, 12])
async def test_every_request_stays_within_max_history_messages(
    tmp_path: Path, max_messages: int
) -> None:
    turns = 16
    scripted = ScriptedModel(*[r for n in range(turns) for r in tool_turn_script(n)])
    session = open_session(
        tmp_path, scripted, summariser("summary")[0], max_history_messages=max_messages
    )
    for n in range(turns):
        result = await session.run(f"question {n}")
        assert result.ok and result.output == f"answer {n}"
    sizes = [len(seen) for seen in scripted.seen]
    assert len(sizes) == 2 * turns and max(sizes) <= max_messages, sizes
    for seen in scripted.seen:
        assert_pairs_valid(seen)
    last_request = scripted.seen[-1]
    assert "question 15" in str(last_request) and any(is_summary(m) for m in last_request)
    await session.aclose()


async def test_the_transcript_keeps_every_turn_and_the_compactions_are_stored(
    tmp_path: Path,
) -> None:
    turns = 30
    scripted = ScriptedModel(*[r for n in range(turns) for r in tool_turn_script(n)])
    model, prompts = summariser("summary")
    session = open_session(tmp_path, scripted, model, max_history_messages=8)
    for n in range(turns):
        assert (await session.run(f"question {n}")).ok
    frontend = session.frontend
    assert isinstance(frontend, RecordingFrontend)
    compacted = frontend.of("compacted")
    assert compacted and len(compacted) == len(session.window.compactions) == len(prompts)
    # Nothing was deleted: all 30 turns, 4 messages each, in memory and in the store.
    assert len(session.history) == 4 * turns
    assert [p for p in user_prompts(session.history)] == [f"question {n}" for n in range(turns)]
    loaded = SessionStore(tmp_path / "sessions.db").load(session.session_id)
    assert loaded.messages == session.history and loaded.info.turns == turns
    assert [c.upto for c in loaded.compactions] == [c.upto for c in session.window.compactions]
    assert is_summary(loaded.compaction.replacement[-1])  # type: ignore[union-attr]
    await session.aclose()


async def test_a_resumed_session_goes_on_from_the_stored_summary(tmp_path: Path) -> None:
    scripted = ScriptedModel(*[r for n in range(10) for r in tool_turn_script(n)])
    model, prompts = summariser("summary")
    session = open_session(tmp_path, scripted, model, max_history_messages=12)
    for n in range(10):
        assert (await session.run(f"question {n}")).ok
    summaries, sid = len(prompts), session.session_id
    await session.aclose()

    again = ScriptedModel(["resumed answer"])
    resumed = open_session(tmp_path, again, model, resume=sid, max_history_messages=12)
    assert (await resumed.run("one more")).output == "resumed answer"
    sent = again.seen[0]
    assert len(sent) <= 12 and f"summary #{summaries}" in str(sent)
    assert "question 1'" not in str(sent)  # summarised long ago: only the summary says it
    assert len(prompts) == summaries  # the stored summary was enough
    await resumed.aclose()


# -- a failing summariser ------------------------------------------------------------------------


async def test_a_failing_summary_is_a_warning_and_is_tried_again_next_turn(
    tmp_path: Path,
) -> None:
    down = RuntimeError("summariser down")
    model, prompts = summariser(down, "recovered")
    scripted = ScriptedModel(*[[f"answer {n}"] for n in range(8)])
    session = open_session(tmp_path, scripted, model, max_history_messages=4)
    for n in range(4):
        assert (await session.run(f"question {n}")).ok
    frontend = session.frontend
    assert isinstance(frontend, RecordingFrontend)
    warnings = [s.message for s in frontend.of("status") if s.level == "warning"]
    assert len(warnings) == 1 and "could not summarise" in warnings[0]
    assert "summariser down" in warnings[0] and "tried again next turn" in warnings[0]
    # That request went out with a marker, within the limit; nothing was recorded.
    failed_request = scripted.seen[2]
    assert len(failed_request) <= 4
    assert any(MARKER_TEXT.split("{")[0] in str(m) for m in failed_request)
    # The next turn tried again and the summary came back.
    assert len(prompts) == 2 and any("recovered" in str(m) for m in scripted.seen[-1])
    assert session.window.compactions
    await session.aclose()


async def test_a_summary_that_fails_with_a_provider_error_is_retried_per_the_policy(
    tmp_path: Path,
) -> None:
    busy = ModelHTTPError(503, "summariser", {"message": "overloaded"})
    model, prompts = summariser(busy, "after a retry")
    scripted = ScriptedModel(*[[f"answer {n}"] for n in range(4)])
    session = open_session(tmp_path, scripted, model, max_history_messages=4)
    window = session.bundle.agent  # type: ignore[union-attr]
    del window
    slept: list[float] = []

    async def no_wait(seconds: float) -> None:
        slept.append(seconds)

    from co_tui.context.window import SendWindow

    send = next(
        c
        for c in session.bundle.agent._root_capability.capabilities  # type: ignore[union-attr]
        if isinstance(c, SendWindow)
    )
    send.sleep = no_wait
    for n in range(3):
        assert (await session.run(f"question {n}")).ok
    assert len(prompts) == 2 and slept == [2.0]
    assert any("after a retry #2" in str(m) for m in scripted.seen[-1])
    frontend = session.frontend
    assert isinstance(frontend, RecordingFrontend)
    assert not [s for s in frontend.of("status") if s.level == "warning"]
    await session.aclose()


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
    assert not deps.turn.compact_next_request
    # What was sent shrank; the conversation did not.
    assert result.messages[: len(history)] == history
    assert deps.context_window.current is not None
    assert deps.context_window.current.kind == "overflow"


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


async def test_compact_sends_a_summary_from_now_on_and_keeps_the_conversation(
    tmp_path: Path,
) -> None:
    model, prompts = summariser("We talked about q0..q9.")
    scripted = ScriptedModel(["after compacting"])
    session = open_session(tmp_path, scripted, model)
    session.history = [m for n in range(10) for m in tool_turn(n, "output " * 200)]
    before = list(session.history)
    shown: list[object] = []
    ctx = commands.CommandContext(
        session.history,
        session.deps,
        session.bundle,  # type: ignore[arg-type]
        session.settings,
        shown.append,
    )
    outcome = await commands.dispatch(ctx, "/compact the tool outputs")
    assert outcome.known and outcome.history is None and session.history == before
    assert "Pay particular attention to: the tool outputs" in prompts[0]
    after = list(session.window.current.replacement)  # type: ignore[union-attr]
    assert len(after) == 2 and is_summary(after[0]) and isinstance(after[1], ModelResponse)
    tokens_before, tokens_after = approx_tokens(before), approx_tokens(after)
    assert shown == [
        f"Compacted 40 message(s) into 2: the next request about {tokens_before:,} → "
        f"{tokens_after:,} tokens ({tokens_before - tokens_after:,} saved). "
        "The full conversation stays in the session."
    ]
    await session.save()
    assert (await session.run("next")).output == "after compacting"
    sent = scripted.seen[0]
    assert sent[:2] == after and len(sent) == 3  # the summary, its acknowledgement, the prompt
    stored = SessionStore(tmp_path / "sessions.db").load(session.session_id)
    assert stored.messages[:40] == before and stored.compaction is not None
    assert stored.compaction.kind == "compact" and stored.compaction.upto == 40
    await session.aclose()


async def test_compact_failure_keeps_what_is_sent(tmp_path: Path) -> None:
    model, _ = summariser(RuntimeError("no model"))
    session = open_session(tmp_path, ScriptedModel(), model)
    session.history = tool_turn(1)
    shown: list[object] = []
    ctx = commands.CommandContext(
        session.history,
        session.deps,
        session.bundle,  # type: ignore[arg-type]
        session.settings,
        shown.append,
    )
    outcome = await commands.dispatch(ctx, "/compact")
    assert outcome.history is None and "Could not compact" in str(shown[0])
    assert session.window.current is None
    await session.aclose()


@pytest.mark.slow
async def test_after_300_turns_with_the_default_window_every_turn_can_be_resumed(
    tmp_path: Path,
) -> None:
    from co_tui.protocol import events as ev
    from co_tui.turn.replay import replay

    turns = 300
    scripted = ScriptedModel(*[[f"answer {n}"] for n in range(turns)])
    model, prompts = summariser("summary")
    session = open_session(tmp_path, scripted, model)  # max_history_messages: the default
    for n in range(turns):
        assert (await session.run(f"question {n}")).ok
    assert max(len(seen) for seen in scripted.seen) <= Settings().max_history_messages
    loaded = SessionStore(tmp_path / "sessions.db").load(session.session_id)
    assert loaded.info.turns == turns and len(loaded.messages) == 2 * turns
    assert user_prompts(loaded.messages) == [f"question {n}" for n in range(turns)]
    events = list(replay(loaded.messages, loaded.info.id, loaded.compactions))
    shown = [e.prompt for e in events if isinstance(e, ev.TurnStart)]
    assert shown == [f"question {n}" for n in range(turns)]
    assert len([e for e in events if isinstance(e, ev.Compacted)]) == len(prompts) > 0
    await session.aclose()


def test_compact_never_says_the_request_grew_when_the_meter_counted_too_little() -> None:
    """A server that reported 15 tokens for a 3,000-token conversation: the meter's count
    cannot show the saving, so the messages' own estimate is shown."""
    from co_tui.context.compaction import Compaction
    from co_tui.context.window import CompactResult

    result = CompactResult(Compaction(upto=14, replacement=(), kind="compact"), 14, 3186, 25)
    said = result.describe(context_before=15, context_after=25)
    assert "about 3,186 → 25 tokens (3,161 saved)" in said
