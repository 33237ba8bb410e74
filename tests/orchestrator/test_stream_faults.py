"""A streamed answer that breaks is a network error: retried under the provider error
policy, never kept as the answer.

The provider is the fake OpenAI-compatible server on 127.0.0.1 (tests/servers/fake_openai.py),
reached through the real openai client and pydantic-ai's OpenAIChatModel as resolved from the
settings; each scripted fault is one way a stream goes wrong on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.protocol import events as ev
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import TurnResult, run_turn
from tests.helpers import ScriptedModel, make_deps
from tests.servers.fake_openai import (
    Reply,
    cut_chunked,
    cut_close,
    cut_mid_chunk,
    garbage,
    serve,
    stall_after_headers,
    stall_mid_stream,
    text,
)

pytestmark = pytest.mark.usefixtures("allow_model_requests")

PARTIAL = "The capital of France is"  # what a broken stream gets through, at most
ANSWER = "The capital of France is Paris."

# Each fault, and what the turn's error says about it once the retries are used up.
BROKEN_STREAMS: dict[str, tuple[Reply, str]] = {
    "cut, close-delimited body": (
        cut_close(PARTIAL),
        "the answer arrived incomplete or unreadable): Streamed response ended without a "
        "`finish_reason`",
    ),
    "cut, chunked body ended properly": (
        cut_chunked(PARTIAL),
        "the answer arrived incomplete or unreadable): Streamed response ended without a "
        "`finish_reason`",
    ),
    "cut inside a chunk": (cut_mid_chunk(PARTIAL), "the connection broke while the answer"),
    "a data line that is not JSON": (
        garbage(PARTIAL),
        "the answer arrived incomplete or unreadable): Failed to decode response as JSON",
    ),
    "a data line that is a JSON list": (
        garbage(PARTIAL, "[1, 2]"),
        "unreadable): Failed to decode response as JSON: a stream chunk that is not a JSON "
        "object (list)",
    ),
    "a data line that is JSON null": (
        garbage(PARTIAL, "null"),
        "unreadable): Failed to decode response as JSON: a stream chunk that is not a JSON "
        "object (null)",
    ),
    "silent after the headers": (stall_after_headers(2, ANSWER), "no answer in time"),
    "silent after the first words": (stall_mid_stream(2, ANSWER), "no answer in time"),
}


@dataclass
class Outcome:
    result: TurnResult
    frontend: RecordingFrontend
    sent: list[dict[str, Any]]  # the body of every request the server answered
    sleeps: list[float]  # every backoff
    saved: list[list[ModelMessage]]  # every checkpoint


async def one_turn(
    tmp_path: Path, script: list[Reply], default: Reply | None = None, retries: int = 1
) -> Outcome:
    frontend = RecordingFrontend()
    sleeps: list[float] = []
    saved: list[list[ModelMessage]] = []

    async def sleep(delay: float) -> None:
        sleeps.append(delay)

    async def checkpoint(
        messages: list[ModelMessage], pending: DeferredToolRequests | None
    ) -> None:
        saved.append(list(messages))

    with serve(script, default) as srv:
        settings = Settings(
            llm_provider="ollama",
            ollama_host=srv.url,
            ollama_model="fake",
            model_http_retries=retries,
            provider_idle_timeout=0.5,
            telemetry_enabled=False,
        )
        bundle = build_agent(settings)
        result = await run_turn(
            bundle.agent,
            "What is the capital of France?",
            deps=make_deps(tmp_path),
            history=[],
            frontend=frontend,
            model_settings=bundle.model_settings,
            http_retries=retries,
            sleep=sleep,
            on_checkpoint=checkpoint,
        )
        sent = [r.body for r in srv.requests]
    return Outcome(result, frontend, sent, sleeps, saved)


def answers(messages: list[ModelMessage]) -> list[str]:
    """The text of every model response in `messages`, whatever its state."""
    return [
        "".join(p.content for p in m.parts if isinstance(p, TextPart))
        for m in messages
        if isinstance(m, ModelResponse)
    ]


@pytest.mark.parametrize("fault", list(BROKEN_STREAMS))
async def test_a_broken_stream_is_retried_and_only_the_good_answer_is_kept(
    tmp_path: Path, fault: str
) -> None:
    reply, _ = BROKEN_STREAMS[fault]
    outcome = await one_turn(tmp_path, [reply, text(ANSWER)])
    result = outcome.result
    assert result.ok, result.error
    assert result.output == ANSWER and len(outcome.sent) == 2
    assert outcome.sleeps == [2.0]  # one network-error backoff
    (retry,) = [e for e in outcome.frontend.of(ev.Status) if e.retry_in_s]
    assert "retry 1 of 1" in retry.message
    # The broken attempt is neither in the history nor in anything saved along the way.
    assert answers(result.messages) == [ANSWER]
    assert all(answers(saved) in ([], [ANSWER]) for saved in outcome.saved)
    assert outcome.saved[-1] == result.messages
    # Nor is it sent back: the retry asks the same question afresh.
    assert outcome.sent[1]["messages"] == outcome.sent[0]["messages"]


@pytest.mark.parametrize("fault", [f for f in BROKEN_STREAMS if f.startswith("cut")])
async def test_the_words_a_cut_stream_showed_are_withdrawn(tmp_path: Path, fault: str) -> None:
    reply, _ = BROKEN_STREAMS[fault]
    outcome = await one_turn(tmp_path, [reply, text(ANSWER)])
    (discarded,) = outcome.frontend.of(ev.AttemptDiscarded)
    assert discarded.text and PARTIAL.startswith(discarded.text)
    assert outcome.result.streamed_text == ANSWER


@pytest.mark.parametrize("fault", list(BROKEN_STREAMS))
async def test_a_stream_that_keeps_breaking_fails_the_turn_saying_why(
    tmp_path: Path, fault: str
) -> None:
    reply, says = BROKEN_STREAMS[fault]
    outcome = await one_turn(tmp_path, [], default=reply)
    result = outcome.result
    assert not result.ok and result.output is None
    assert len(outcome.sent) == 2 and outcome.sleeps == [2.0]  # the policy's one retry
    assert result.error is not None
    assert says in result.error and "(gave up after 1 retries)" in result.error
    assert [e.message for e in outcome.frontend.of(ev.Error)] == [result.error]
    # The question is kept; no half answer is stored as if the model had finished.
    assert "What is the capital of France?" in str(result.messages)
    assert answers(result.messages) == []
    assert all(answers(saved) == [] for saved in outcome.saved)


async def test_a_cut_stream_is_not_an_answer_even_without_retries(tmp_path: Path) -> None:
    outcome = await one_turn(tmp_path, [cut_close(PARTIAL), text(ANSWER)], retries=0)
    assert outcome.result.error is not None and "finish_reason" in outcome.result.error
    assert len(outcome.sent) == 1 and outcome.sleeps == []
    assert answers(outcome.result.messages) == []


async def test_a_stray_json_object_in_a_finished_stream_is_skipped(tmp_path: Path) -> None:
    """Not a chunk, but the stream still ends with its finish reason: the answer is whole."""
    outcome = await one_turn(tmp_path, [garbage(ANSWER, '{"unexpected": true}')])
    assert outcome.result.ok, outcome.result.error
    assert outcome.result.output == ANSWER and len(outcome.sent) == 1


async def test_a_model_that_reports_no_finish_reason_at_all_still_answers(
    tmp_path: Path,
) -> None:
    """FunctionModel (tests, evals) never sets a finish reason: only streams from a provider
    must end with one."""
    scripted = ScriptedModel(["Paris", "."])
    bundle = build_agent(Settings(telemetry_enabled=False), model=scripted.model)
    result = await run_turn(
        bundle.agent,
        "What is the capital of France?",
        deps=make_deps(tmp_path),
        history=[],
        frontend=RecordingFrontend(),
    )
    assert result.ok, result.error
    assert result.output == "Paris."
    (response,) = [m for m in result.messages if isinstance(m, ModelResponse)]
    assert response.finish_reason is None
