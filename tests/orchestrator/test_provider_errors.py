"""Provider errors over real HTTP: a local OpenAI-compatible server answers 429/500/400/401."""

from __future__ import annotations

from pathlib import Path

import pytest

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.llm.provider_errors import MAX_DELAY_S, backoff_delay
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import make_deps
from tests.servers.fake_openai import error, serve, text

pytestmark = pytest.mark.usefixtures("allow_model_requests")


async def run_against(server_url: str, tmp_path: Path, retries: int = 2):
    settings = Settings(
        llm_provider="ollama",
        ollama_host=server_url,
        ollama_model="fake",
        model_http_retries=retries,
    )
    bundle = build_agent(settings)
    frontend = RecordingFrontend()
    sleeps: list[float] = []

    async def record_sleep(delay: float) -> None:
        sleeps.append(delay)

    result = await run_turn(
        bundle.agent,
        "hello",
        deps=make_deps(tmp_path),
        history=[],
        frontend=frontend,
        model_settings=bundle.model_settings,
        http_retries=retries,
        sleep=record_sleep,
    )
    return result, frontend, sleeps


async def test_429_waits_for_retry_after_then_answers(tmp_path: Path) -> None:
    with serve([error(429, "slow down", **{"Retry-After": "1"}), text("Paris.")]) as srv:
        result, frontend, sleeps = await run_against(srv.url, tmp_path)
    assert result.output == "Paris."
    assert sleeps == [1.0]
    assert len(srv.requests) == 2  # the SDK did not retry on its own
    (status,) = frontend.of("status")
    assert status.retry_in_s == 1.0 and "rate limited" in status.message


async def test_429_without_retry_after_waits_the_default(tmp_path: Path) -> None:
    with serve([error(429, "slow down"), text("ok")]) as srv:
        result, _, sleeps = await run_against(srv.url, tmp_path)
    assert result.output == "ok" and sleeps == [3.0]


async def test_5xx_backs_off_exponentially_then_gives_up(tmp_path: Path) -> None:
    with serve(default=error(500, "boom")) as srv:
        result, frontend, sleeps = await run_against(srv.url, tmp_path, retries=2)
    assert sleeps == [2.0, 4.0]
    assert len(srv.requests) == 3
    assert result.error and "gave up after 2 retries" in result.error
    assert frontend.of("error")


async def test_400_is_reflected_to_the_model_which_corrects_itself(tmp_path: Path) -> None:
    with serve([error(400, "tool schema invalid"), text("corrected")]) as srv:
        result, _, sleeps = await run_against(srv.url, tmp_path)
    assert result.output == "corrected" and sleeps == []
    second = srv.requests[1].body["messages"]
    assert any("tool schema invalid" in str(m.get("content")) for m in second)


@pytest.mark.parametrize("status", [401, 403, 404])
async def test_auth_and_not_found_abort_with_a_clear_message(tmp_path: Path, status: int) -> None:
    with serve([error(status, "nope")]) as srv:
        result, frontend, sleeps = await run_against(srv.url, tmp_path)
    assert len(srv.requests) == 1 and sleeps == []
    assert result.output is None and result.error
    assert str(status) in result.error
    assert [e.message for e in frontend.of("error")] == [result.error]
    # The user's prompt is kept, so nothing they typed is lost.
    assert "hello" in str(result.messages)


async def test_connection_refused_backs_off(tmp_path: Path) -> None:
    with serve() as srv:
        url = srv.url
    result, _, sleeps = await run_against(url, tmp_path, retries=1)
    assert sleeps == [2.0]
    assert result.error and "cannot reach" in result.error


def test_backoff_is_capped() -> None:
    assert backoff_delay(10, None, 500) == MAX_DELAY_S
    assert backoff_delay(10, 5, 429) == MAX_DELAY_S
    assert backoff_delay(0, 7, 429) == 7
