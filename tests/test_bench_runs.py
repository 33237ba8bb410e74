"""The benchmarks drive the app as a user would: a change to the app that breaks them is
caught here, not in the next `make bench` (which CI does not run)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from bench import long_sessions, p1_stream, p2_sessions

from tests.servers.fake_openai import serve


@pytest.mark.slow
async def test_the_streaming_benchmark_runs_a_turn_in_the_app(tmp_path: Path) -> None:
    elapsed, _ = await p1_stream.run_app(50, tmp_path)
    assert elapsed > 0


@pytest.mark.slow
async def test_the_sessions_benchmark_opens_a_stored_session_in_the_app(tmp_path: Path) -> None:
    first_frame, restored = await p2_sessions.open_cost(tmp_path / "sessions.db", tmp_path, 5)
    assert 0 < first_frame <= restored


@pytest.mark.slow
@pytest.mark.e2e
def test_the_long_sessions_benchmark_streams_and_runs_turns_in_a_terminal(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    co_tui = str(Path(sys.executable).with_name("co-tui"))
    with serve() as server:
        figures = long_sessions.measure(
            [co_tui], server, tmp_path, f"test-bench-long-{os.getpid()}", stream_s=2, turns=3
        ).values
    assert figures["stream: RSS at the end (MB)"] > 0
    assert figures["RSS after turn 3 (MB)"] > 0
    assert figures["CPU idle, 5 s after the last turn (s)"] >= 0
