"""The benchmarks drive the app as a user would: a change to the app that breaks them is
caught here, not in the next `make bench` (which CI does not run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench import p1_stream, p2_sessions


@pytest.mark.slow
async def test_the_streaming_benchmark_runs_a_turn_in_the_app(tmp_path: Path) -> None:
    elapsed, _ = await p1_stream.run_app(50, tmp_path)
    assert elapsed > 0


@pytest.mark.slow
async def test_the_sessions_benchmark_opens_a_stored_session_in_the_app(tmp_path: Path) -> None:
    first_frame, restored = await p2_sessions.open_cost(tmp_path / "sessions.db", tmp_path, 5)
    assert 0 < first_frame <= restored
