"""A provider that accepts the request and then says nothing: the idle timeout makes it a
network error (retried as such), the wait is reported while it lasts, and a tool that runs
long is not mistaken for the provider's silence.

The provider is the fake OpenAI-compatible server on 127.0.0.1, reached through the real
openai client; the turn runs through ChatSession as every front runs it.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.headless.frontend import HeadlessFrontend
from co_tui.llm.provider_errors import backoff_delay
from co_tui.llm.providers import provider_timeout
from co_tui.protocol import events as ev
from co_tui.protocol.recording import RecordingFrontend
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.session.chat import ChatSession
from co_tui.turn.runner import TurnResult
from tests.servers.fake_openai import serve, stall_before_headers, stall_mid_stream, text
from tests.tui.helpers import last_tool_returns

pytestmark = pytest.mark.usefixtures("allow_model_requests")


def settings_for(url: str, **kw: Any) -> Settings:
    return Settings(
        llm_provider="ollama",
        ollama_host=url,
        ollama_model="fake",
        sandbox_backend="subprocess",
        telemetry_enabled=False,
        **kw,
    )


async def one_turn(settings: Settings, workspace: Path, frontend: Any) -> TurnResult:
    session = ChatSession(settings, workspace=workspace, frontend=frontend, record=False)
    try:
        await session.start()
        return await session.run("hello")
    finally:
        await session.aclose()


def waits(frontend: RecordingFrontend) -> list[int]:
    return [e.seconds for e in frontend.events if isinstance(e, ev.ProviderWaiting)]


def test_the_defaults_bound_connect_and_the_wait_between_events() -> None:
    settings = Settings()
    timeout = provider_timeout(settings)
    assert (timeout.connect, timeout.read, timeout.pool) == (10, 50, 10)
    # A provider that accepts the request and never answers: every attempt waits the idle
    # timeout, with the policy's back-off between them. The bound is 3 minutes.
    retries = settings.model_http_retries
    backoffs = sum(backoff_delay(attempt, None, None) for attempt in range(retries))
    assert (retries + 1) * timeout.read + backoffs < 180


@pytest.mark.slow
async def test_a_provider_silent_before_its_headers_is_retried(tmp_path: Path) -> None:
    settings = settings_for("", provider_idle_timeout=0.5, model_http_retries=1)
    with serve([stall_before_headers(3), text("Here it is.")]) as srv:
        settings = settings.model_copy(update={"ollama_host": srv.url})
        frontend = RecordingFrontend()
        result = await one_turn(settings, tmp_path, frontend)
        asked = len(srv.requests)
    assert result.ok, result.error
    assert result.output == "Here it is." and asked == 2
    retries = [e for e in frontend.events if isinstance(e, ev.Status) and e.retry_in_s]
    assert len(retries) == 1 and "no answer in time" in retries[0].message


@pytest.mark.slow
async def test_a_stream_that_stops_midway_is_retried(tmp_path: Path) -> None:
    settings = settings_for("", provider_idle_timeout=0.5, model_http_retries=1)
    with serve([stall_mid_stream(3), text("The whole answer.")]) as srv:
        settings = settings.model_copy(update={"ollama_host": srv.url})
        result = await one_turn(settings, tmp_path, RecordingFrontend())
        asked = len(srv.requests)
    assert result.ok, result.error
    assert result.output == "The whole answer." and asked == 2


@pytest.mark.slow
async def test_a_provider_that_never_answers_fails_the_turn_after_the_retries(
    tmp_path: Path,
) -> None:
    settings = settings_for("", provider_idle_timeout=0.5, model_http_retries=1)
    with serve(default=stall_before_headers(3)) as srv:
        settings = settings.model_copy(update={"ollama_host": srv.url})
        result = await one_turn(settings, tmp_path, RecordingFrontend())
        asked = len(srv.requests)
    assert not result.ok and asked == 2  # the first attempt and one retry, nothing more
    assert result.error is not None and "provider_idle_timeout" in result.error


@pytest.mark.slow
async def test_the_wait_is_reported_while_it_lasts_and_ends_with_the_answer(
    tmp_path: Path,
) -> None:
    with serve([stall_before_headers(4.5, "Sorry for the wait.")]) as srv:
        settings = settings_for(srv.url)
        frontend = RecordingFrontend()
        result = await one_turn(settings, tmp_path, frontend)
    assert result.output == "Sorry for the wait."
    seen = waits(frontend)
    assert seen[0] >= 3 and seen[-1] == 0 and sorted(seen[:-1]) == seen[:-1]
    first_text = next(i for i, e in enumerate(frontend.events) if isinstance(e, ev.TextDelta))
    cleared = frontend.events.index(ev.ProviderWaiting(session_id=result_sid(frontend), seconds=0))
    assert cleared < first_text  # the status bar stops counting as the words arrive


def result_sid(frontend: RecordingFrontend) -> str:
    return next(e.session_id for e in frontend.events if isinstance(e, ev.TurnStart))


@pytest.mark.slow
async def test_print_mode_says_it_is_waiting_on_stderr(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    with serve([stall_before_headers(4.5, "Finally.")]) as srv:
        frontend = HeadlessFrontend("text", out=out, err=err)
        result = await one_turn(settings_for(srv.url), tmp_path, frontend)
    assert result.output == "Finally."
    said = [line for line in err.getvalue().splitlines() if "waiting for the provider" in line]
    assert len(said) == 1 and said[0].startswith("… waiting for the provider (")
    assert out.getvalue() == "Finally.\n"  # stdout holds the answer only


def slow_tool_then_answer() -> Any:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if not last_tool_returns(messages):
            args = '{"cmd": "sleep 4.5"}'
            yield {0: DeltaToolCall(name="run_shell_command", json_args=args, tool_call_id="c1")}
            return
        yield "slept"

    return fn


@pytest.mark.slow
async def test_a_long_running_tool_is_not_the_provider_s_silence(tmp_path: Path) -> None:
    settings = Settings(auto_confirm=True, telemetry_enabled=False)
    model = FunctionModel(stream_function=slow_tool_then_answer(), model_name="fn")
    bundle = build_agent(settings, model=model, instructions="test")
    choice = SandboxChoice(SubprocessSandbox(tmp_path), "test sandbox")
    deps = create_deps(settings, tmp_path, sandbox_choice=choice)
    frontend = RecordingFrontend()
    session = ChatSession(settings, frontend=frontend, record=False, bundle=bundle, deps=deps)
    try:
        await session.start()
        result = await session.run("sleep a while")
    finally:
        await session.aclose()
    assert result.output == "slept"
    assert waits(frontend) == []


@pytest.mark.slow
async def test_the_activity_line_counts_the_wait_and_clears_with_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from co_tui.tui.app import CoApp
    from tests.telemetry.test_viewer import until
    from tests.tui.helpers import SIZE, rendered, settle

    monkeypatch.chdir(tmp_path)
    with serve([stall_before_headers(4.5, "Here now.")]) as srv:
        app = CoApp(settings_for(srv.url, theme="textual-dark"), history_path=None)
        async with app.run_test(size=SIZE) as pilot:
            assert await app.wait_ready()
            app.start_turn("hello")
            line = app.chat.activity_line
            await until(pilot, lambda: "waiting for ollama… 3s" in rendered(line), tries=200)
            assert "waiting" not in app.chat.status_bar.status.note  # said once
            await settle(pilot, app)
            assert app.session.last_answer == "Here now." and not line.display
