"""Spans of a real agent run (FunctionModel, approved shell call) land in SQLite, linked."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from co_tui.protocol.frontend import ApprovalDecision, args_hash
from co_tui.protocol.recording import RecordingFrontend
from co_tui.telemetry import Telemetry
from co_tui.telemetry.store import open_for_reading
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps
from tests.telemetry.conftest import rows


async def _approved_shell_turn(tmp_path: Path, cmd: str, prompt: str = "list it") -> None:
    model = ScriptedModel(
        ["Running it.", Call("run_shell_command", {"cmd": cmd}, "c1")], ["All done."]
    )
    bundle = make_bundle(model.model)
    deps = make_deps(tmp_path)
    result = await run_turn(
        bundle.agent,
        prompt,
        deps=deps,
        history=[],
        frontend=RecordingFrontend([ApprovalDecision.APPROVE]),
    )
    assert result.ok, result.error


def _by_name(db: Path) -> dict[str, list[sqlite3.Row]]:
    out: dict[str, list[sqlite3.Row]] = {}
    for row in rows(db):
        out.setdefault(row["name"], []).append(row)
    return out


@pytest.mark.e2e
async def test_agent_run_spans_nest(tmp_path: Path, telemetry: Telemetry, db_path: Path) -> None:
    await _approved_shell_turn(tmp_path, "echo hello-from-sandbox")
    assert telemetry.flush()
    spans = _by_name(db_path)

    (turn,) = spans["turn"]
    assert turn["parent_id"] is None
    trace = turn["trace_id"]
    assert all(r["trace_id"] == trace for group in spans.values() for r in group)

    # Two agent runs: paused for approval, then resumed; both under the turn.
    runs = spans["invoke_agent co"]
    assert len(runs) == 2 and all(r["parent_id"] == turn["id"] for r in runs)
    run_ids = {r["id"] for r in runs}
    chats = [r for name, group in spans.items() if name.startswith("chat ") for r in group]
    assert len(chats) == 2 and all(c["parent_id"] in run_ids for c in chats)
    chat_attrs = json.loads(chats[0]["attributes"])
    assert chat_attrs["gen_ai.operation.name"] == "chat"
    assert "gen_ai.request.model" in chat_attrs and "gen_ai.usage.input_tokens" in chat_attrs

    (tool,) = spans["execute_tool run_shell_command"]
    assert tool["parent_id"] in run_ids
    tool_attrs = json.loads(tool["attributes"])
    assert tool_attrs["gen_ai.tool.name"] == "run_shell_command"
    assert tool_attrs["gen_ai.tool.call.id"] == "c1"
    assert "hello-from-sandbox" in tool_attrs["gen_ai.tool.call.result"]

    (sandbox,) = spans["sandbox_command"]
    assert sandbox["parent_id"] == tool["id"]  # the command nests under the tool execution
    sandbox_attrs = json.loads(sandbox["attributes"])
    assert sandbox_attrs["co.sandbox.command"] == "echo hello-from-sandbox"
    assert sandbox_attrs["co.sandbox.exit_code"] == 0

    (approval,) = spans["approval run_shell_command"]
    assert approval["parent_id"] == turn["id"]
    approval_attrs = json.loads(approval["attributes"])
    assert approval_attrs["co.approval.decision"] == "approve"
    expected = args_hash({"cmd": "echo hello-from-sandbox"})
    assert approval_attrs["co.approval.args_sha256"] == expected
    assert expected == hashlib.sha256(b'{"cmd":"echo hello-from-sandbox"}').hexdigest()

    for row in rows(db_path):
        assert row["end_time"] >= row["start_time"] and row["duration_ms"] >= 0
        assert row["status_code"] in ("UNSET", "OK", "ERROR")
        assert json.loads(row["resource"])["service.name"] == "co-tui"


async def test_database_is_wal_with_indexes(telemetry: Telemetry, db_path: Path) -> None:
    with telemetry.tracer.start_as_current_span("one"):
        pass
    telemetry.flush()
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    indexes = {r[1] for r in conn.execute("PRAGMA index_list(spans)")}
    assert {"idx_spans_start_time", "idx_spans_trace_id"} <= indexes
    plan = " ".join(
        str(r[3])
        for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM spans ORDER BY start_time DESC LIMIT 200"
        )
    )
    assert "idx_spans_start_time" in plan
    conn.close()
    ro = open_for_reading(db_path)
    assert ro is not None and ro.execute("SELECT count(*) FROM spans").fetchone()[0] == 1
