"""Sub-agent spans nest under the parent's `execute_tool delegate` span, in the same trace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from co_tui.config.settings import Settings
from co_tui.protocol.recording import RecordingFrontend
from co_tui.telemetry import Telemetry, setup_telemetry, shutdown_telemetry
from co_tui.turn.runner import run_turn
from co_tui.turn.subagents import SUBAGENT_NAME
from tests.helpers import make_bundle, make_deps
from tests.subagents.scripts import PARENT_PROMPT, DelegatingScript
from tests.telemetry.conftest import rows


@pytest.fixture
def telemetry(tmp_path: Path) -> Iterator[tuple[Telemetry, Path]]:
    db = tmp_path / "data" / "co-tui.db"
    tel = setup_telemetry(Settings(), db)
    assert tel is not None
    yield tel, db
    shutdown_telemetry()


async def test_subagent_spans_nest_under_delegate(
    tmp_path: Path, telemetry: tuple[Telemetry, Path]
) -> None:
    tel, db = telemetry
    bundle = make_bundle(DelegatingScript().model(), Settings())
    result = await run_turn(
        bundle.agent,
        PARENT_PROMPT,
        deps=make_deps(tmp_path),
        history=[],
        frontend=RecordingFrontend(),
    )
    assert result.ok, result.error
    assert tel.flush()
    spans = rows(db)
    by_id = {r["id"]: r for r in spans}
    assert len({r["trace_id"] for r in spans}) == 1  # one turn, one trace
    delegates = [r for r in spans if r["name"] == "execute_tool delegate"]
    children = [r for r in spans if r["name"] == f"invoke_agent {SUBAGENT_NAME}"]
    assert len(delegates) == 2 and len(children) == 2
    assert {c["parent_id"] for c in children} == {d["id"] for d in delegates}
    # The sub-agent's own tool call sits under its run, under the parent's tool span.
    (list_memories,) = [r for r in spans if r["name"] == "execute_tool list_memories"]
    ancestors = []
    node = list_memories
    while node["parent_id"]:
        node = by_id[node["parent_id"]]
        ancestors.append(node["name"])
    chain = [a for a in ancestors if a in (f"invoke_agent {SUBAGENT_NAME}",
             "execute_tool delegate", "invoke_agent co", "turn")]  # fmt: skip
    assert chain == [
        f"invoke_agent {SUBAGENT_NAME}",
        "execute_tool delegate",
        "invoke_agent co",
        "turn",
    ]
