"""The embedded model's token counts: its server sends no usage in a stream, so co-tui
counts the tokens with the server's own tokenizer."""

from __future__ import annotations

from pathlib import Path

import pytest

from co_tui.agent.build import build_agent
from co_tui.context.deps import create_deps
from co_tui.llm.local import server as local_server
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.llm.conftest import local_settings

pytestmark = [pytest.mark.llm, pytest.mark.usefixtures("allow_model_requests")]


async def test_a_streamed_local_answer_counts_its_tokens(
    shared_server: local_server.Endpoint, tmp_path: Path
) -> None:
    settings = local_settings(tmp_path)
    bundle = build_agent(settings)
    deps = create_deps(settings, tmp_path)
    frontend = RecordingFrontend()

    result = await run_turn(
        bundle.agent,
        "What colour is the sky?",
        deps=deps,
        history=[],
        frontend=frontend,
        model_settings=bundle.model_settings,
    )

    assert result.ok, result.error
    (usage,) = frontend.of("usage")
    # The system prompt alone is hundreds of tokens; the answer at least one.
    assert usage.input_tokens > 100
    assert usage.output_tokens >= 1
    assert result.usage.input_tokens == usage.input_tokens
