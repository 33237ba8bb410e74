"""A provider that gives every turn's tool call the same id (`call_0`): the tool-run journal
names a call by what co-tui assigned it (its response's position in the session), so two
calls never merge. Real turns (FunctionModel, subprocess sandbox) into a real store."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart

from co_tui.protocol import events as ev
from co_tui.protocol.frontend import ApprovalDecision, ApprovalRequest
from co_tui.protocol.recording import RecordingFrontend
from co_tui.store import records
from co_tui.store.recorder import SessionRecorder
from co_tui.store.session_store import SessionStore
from co_tui.turn.replay import replay
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, tool_returns

REUSED = "call_0"


class NeverDecides(RecordingFrontend):
    """The approval dialog is open when co-tui stops."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()

    async def prompt_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.set()
        await asyncio.Event().wait()
        raise AssertionError


def shell(cmd: str) -> Call:
    return Call("run_shell_command", {"cmd": cmd}, REUSED)


async def first_turn(store: SessionStore, workspace: Path) -> list[ModelMessage]:
    """Turn 1: `echo one` as call_0, approved, run, answered."""
    recorder = SessionRecorder(store, "s1", cwd=workspace)
    recorder.begin_turn("first")
    result = await run_turn(
        make_bundle(ScriptedModel([shell("echo one")], ["ran one"]).model).agent,
        "first",
        deps=make_deps(workspace),
        history=[],
        frontend=RecordingFrontend([ApprovalDecision.APPROVE]),
        on_checkpoint=recorder.checkpoint,
        journal=recorder,
    )
    assert result.ok and result.output == "ran one"
    return result.messages


def results_shown(messages: list[ModelMessage]) -> list[tuple[str, str]]:
    """(status, text) of every tool result a reopened transcript draws, in order."""
    return [
        (e.status, e.content.strip())
        for e in replay(messages, "s1")
        if isinstance(e, ev.ToolResult)
    ]


async def test_a_waiting_approval_with_a_reused_id_is_asked_again_after_a_restart(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    store = SessionStore(db)
    history = await first_turn(store, tmp_path)
    # Turn 2: the model calls `echo two`, again as call_0; the dialog is open; co-tui stops.
    recorder = SessionRecorder.resume(store, store.load("s1"))
    recorder.begin_turn("second")
    frontend = NeverDecides()
    task = asyncio.create_task(
        run_turn(
            make_bundle(ScriptedModel([shell("echo two")]).model).agent,
            "second",
            deps=make_deps(tmp_path),
            history=history,
            frontend=frontend,
            on_checkpoint=recorder.checkpoint,
            journal=recorder,
        )
    )
    await asyncio.wait_for(frontend.asked.wait(), 5)
    task.cancel()
    await task
    store.close()

    store = SessionStore(db)
    loaded = store.load("s1")
    assert loaded.pending is not None, "the open approval was closed instead of asked again"
    [waiting] = loaded.pending.approvals
    assert isinstance(waiting, ToolCallPart) and waiting.args_as_dict() == {"cmd": "echo two"}
    assert loaded.unfinished == [] and loaded.unfinished_notice() is None
    # The first call is still shown as it ended: done, with its result.
    assert results_shown(loaded.messages) == [("ok", "one")]

    # Asked again: approved, it runs, and the session goes on.
    approver = RecordingFrontend([ApprovalDecision.APPROVE])
    recorder = SessionRecorder.resume(store, loaded)
    result = await run_turn(
        make_bundle(ScriptedModel(["ran two"]).model).agent,
        "",
        deps=make_deps(tmp_path),
        history=loaded.messages,
        frontend=approver,
        on_checkpoint=recorder.checkpoint,
        journal=recorder,
        resume_deferred=loaded.pending,
    )
    assert result.ok and result.output == "ran two"
    [asked] = approver.of("prompt_approval")
    assert asked.args == {"cmd": "echo two"}
    again = SessionStore(db).load("s1")
    assert again.pending is None
    assert results_shown(again.messages) == [("ok", "one"), ("ok", "two")]


async def test_a_crash_while_a_reused_id_runs_marks_only_that_call_interrupted(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    store = SessionStore(db)
    history = await first_turn(store, tmp_path)
    # Turn 2's call_0 was approved and had started when co-tui was killed (SIGKILL: nothing
    # but the write-ahead row and the response are stored).
    second = ToolCallPart("run_shell_command", {"cmd": "echo two"}, tool_call_id=REUSED)
    crashed = [*history, ModelRequest.user_text_prompt("second"), ModelResponse(parts=[second])]
    recorder = SessionRecorder.resume(store, store.load("s1"))
    recorder.save(crashed)
    await recorder.calls_decided(len(crashed) - 1, [_approved(second)])
    store.close()

    loaded = SessionStore(db).load("s1")
    assert [(r.tool_call_id, r.args) for r in loaded.unfinished] == [(REUSED, {"cmd": "echo two"})]
    notice = loaded.unfinished_notice()
    assert notice is not None and "echo two" in notice and "echo one" not in notice
    answers = tool_returns(loaded.messages)
    assert [(a.content, a.outcome) for a in answers] == [
        (answers[0].content, "success"),
        (records.UNFINISHED_CALL, "interrupted"),
    ]
    assert "one" in str(answers[0].content)
    assert results_shown(loaded.messages) == [
        ("ok", "one"),
        ("interrupted", records.UNFINISHED_CALL),
    ]


def _approved(call: ToolCallPart) -> ev.ApprovalRecord:
    return ev.ApprovalRecord(
        session_id="s1",
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        args=call.args_as_dict(),
        args_hash="",
        decision="approve",
        reason="the user approved",
    )


# The journal as schema 3 wrote it: keyed by the call's id alone.
TOOL_RUNS_3 = (
    "CREATE TABLE tool_runs (session_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, "
    "tool_name TEXT NOT NULL, args BLOB NOT NULL, decision TEXT NOT NULL, state TEXT NOT NULL, "
    "result BLOB, started REAL NOT NULL, finished REAL, PRIMARY KEY (session_id, "
    "tool_call_id)) WITHOUT ROWID"
)


def test_a_schema_3_journal_is_read_and_upgraded_with_its_rows(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    call = ToolCallPart("run_shell_command", {"cmd": "echo old"}, tool_call_id="c1")
    messages = [ModelRequest.user_text_prompt("old"), ModelResponse(parts=[call])]
    store = SessionStore(db)
    store.save("s1", messages)
    store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE tool_runs")
        conn.execute(TOOL_RUNS_3)
        conn.execute(
            "INSERT INTO tool_runs VALUES ('s1', 'c1', 'run_shell_command', ?, 'approve', "
            "'running', NULL, 1, NULL)",
            (b'{"cmd": "echo old"}',),
        )
        conn.execute("PRAGMA user_version=3")
    conn.close()

    reading = SessionStore(db)  # read-only: the file is read as the current layout
    loaded = reading.load("s1")
    assert [r.tool_call_id for r in loaded.unfinished] == ["c1"]
    assert tool_returns(loaded.messages)[0].content == records.UNFINISHED_CALL
    reading.set_title("s1", "written")  # the first write upgrades the file, rows kept
    reading.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
        rows = conn.execute("SELECT response_at, tool_call_id, state FROM tool_runs").fetchall()
    conn.close()
    assert rows == [(-1, "c1", "running")]
    assert [r.tool_call_id for r in SessionStore(db).load("s1").unfinished] == ["c1"]


def test_an_old_decision_never_approves_another_command_under_the_same_id(
    tmp_path: Path,
) -> None:
    """A model that reuses `c1` for a destructive command after an approved `echo`: the old
    journal row (written before calls had positions) must not count as this call's decision;
    the waiting approval is asked again."""
    db = tmp_path / "s.db"
    echoed = ToolCallPart("run_shell_command", {"cmd": "echo old"}, tool_call_id="c1")
    wiping = ToolCallPart("run_shell_command", {"cmd": "rm -rf ~/notes"}, tool_call_id="c1")
    messages = [ModelRequest.user_text_prompt("wipe it"), ModelResponse(parts=[wiping])]
    store = SessionStore(db)
    store.save("s1", messages, pending=DeferredToolRequests(approvals=[wiping]))
    store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE tool_runs")
        conn.execute(TOOL_RUNS_3)
        conn.execute(
            "INSERT INTO tool_runs VALUES ('s1', 'c1', 'run_shell_command', ?, 'approve', "
            "'done', 'old', 1, 2)",
            (echoed.args_as_json_str().encode(),),
        )
        conn.execute("PRAGMA user_version=3")
    conn.close()

    loaded = SessionStore(db).load("s1")
    assert loaded.pending is not None
    assert [p.args for p in loaded.pending.approvals] == [{"cmd": "rm -rf ~/notes"}]
