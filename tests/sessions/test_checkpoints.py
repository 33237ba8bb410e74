"""run_turn's checkpoints into a real store: every response, approval pauses, interruptions,
and a pending approval that survives a restart."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui.protocol.frontend import ApprovalDecision, ApprovalRequest
from co_tui.protocol.recording import RecordingFrontend
from co_tui.store.recorder import SessionRecorder
from co_tui.store.session_store import SessionStore
from co_tui.turn.runner import run_turn
from tests.helpers import (
    Call,
    ScriptedModel,
    Think,
    make_bundle,
    make_deps,
    tool_returns,
    user_prompts,
)


class SnapshotStore(SessionStore):
    """A real store that also remembers what each save contained (to check the order)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.snapshots: list[tuple[int, bool]] = []

    def save(self, session_id: str, messages: Any, **kw: Any) -> int:
        self.snapshots.append((len(messages), kw.get("pending") is not None))
        return super().save(session_id, messages, **kw)


async def test_every_response_and_the_approval_pause_are_saved(tmp_path: Path) -> None:
    model = ScriptedModel(
        [Think("hmm"), "Let me run it.", Call("run_shell_command", {"cmd": "echo hi"}, "c1")],
        ["It printed hi."],
    )
    store = SnapshotStore(tmp_path / "s.db")
    rec = SessionRecorder(store, "s1", model="fn", cwd=tmp_path)
    rec.begin_turn("run echo")
    result = await run_turn(make_bundle(model.model).agent, "run echo", deps=make_deps(tmp_path),
                            history=[], frontend=RecordingFrontend([ApprovalDecision.APPROVE]),
                            on_checkpoint=rec.checkpoint)  # fmt: skip
    assert result.ok
    # prompt; the response with the call; the pause (pending); the tool return; the answer.
    assert store.snapshots == [(1, False), (2, False), (2, True), (3, False), (4, False)]
    loaded = SessionStore(store.path).load("s1")
    assert loaded.messages == result.messages and loaded.pending is None
    assert loaded.info.title == "run echo" and loaded.info.turns == 1


async def test_an_interrupted_turn_is_stored_with_its_partial_text(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "The first half of an ans"
        started.set()
        await asyncio.Event().wait()  # never finishes
        yield "never"

    store = SessionStore(tmp_path / "s.db")
    rec = SessionRecorder(store, "s1", cwd=tmp_path)
    agent = make_bundle(FunctionModel(stream_function=stream)).agent
    task = asyncio.create_task(
        run_turn(
            agent,
            "explain",
            deps=make_deps(tmp_path),
            history=[],
            frontend=RecordingFrontend(),
            on_checkpoint=rec.checkpoint,
        )
    )
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.sleep(0.05)
    task.cancel()
    result = await task
    assert result.interrupted
    loaded = SessionStore(store.path).load("s1")
    assert loaded.info.interrupted
    last = loaded.messages[-1]
    assert isinstance(last, ModelResponse) and last.state == "interrupted"
    assert last.parts == [TextPart(content="The first half of an ans")]


def shell_then_answer(marker: Path) -> FunctionModel:
    """Calls run_shell_command to create `marker`; after its return, says what came back."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        from pydantic_ai.models.function import DeltaToolCall

        returns = tool_returns(messages[-1:])
        if returns:
            yield f"The tool said: {returns[0].content}"
            return
        args = json.dumps({"cmd": f"echo made > {marker.name} && echo created"})
        yield {0: DeltaToolCall(name="run_shell_command", json_args=args, tool_call_id="c7")}

    return FunctionModel(stream_function=stream, model_name="fn")


class NeverDecides(RecordingFrontend):
    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()

    async def prompt_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.set()
        await asyncio.Event().wait()  # the user walks away; the app is closed
        raise AssertionError


async def test_a_pending_approval_survives_a_restart(tmp_path: Path) -> None:
    marker = tmp_path / "made.txt"
    db = tmp_path / "s.db"
    # First process: the model asks to run a command; nobody answers; the app quits.
    store = SessionStore(db)
    rec = SessionRecorder(store, "s1", cwd=tmp_path)
    rec.begin_turn("make the file")
    frontend = NeverDecides()
    task = asyncio.create_task(run_turn(
        make_bundle(shell_then_answer(marker)).agent, "make the file", deps=make_deps(tmp_path),
        history=[], frontend=frontend, on_checkpoint=rec.checkpoint,
    ))  # fmt: skip
    await asyncio.wait_for(frontend.asked.wait(), 5)
    task.cancel()
    await task
    store.close()
    assert not marker.exists()

    # Second process: the session still waits for that approval; it is asked again.
    store = SessionStore(db)
    loaded = store.load("s1")
    assert loaded.pending is not None
    (call,) = loaded.pending.approvals
    assert isinstance(call, ToolCallPart) and call.tool_call_id == "c7"
    rec = SessionRecorder.resume(store, loaded)
    approver = RecordingFrontend([ApprovalDecision.APPROVE])
    result = await run_turn(
        make_bundle(shell_then_answer(marker)).agent, "", deps=make_deps(tmp_path),
        history=loaded.messages, frontend=approver, on_checkpoint=rec.checkpoint,
        resume_deferred=loaded.pending,
    )  # fmt: skip
    assert result.ok and marker.read_text() == "made\n"
    (asked,) = approver.of("prompt_approval")
    assert asked.tool_call_id == "c7" and "echo made" in asked.args["cmd"]
    assert "created" in (result.output or "")
    again = SessionStore(db).load("s1")
    assert again.pending is None and again.messages == result.messages
    assert user_prompts(again.messages) == ["make the file"]
    assert [p.tool_call_id for p in tool_returns(again.messages)] == ["c7"]


async def test_a_checkpoint_failure_is_reported_and_the_turn_goes_on(tmp_path: Path) -> None:
    async def broken(messages: list[ModelMessage], pending: Any) -> None:
        raise OSError("disk full")

    frontend = RecordingFrontend()
    result = await run_turn(make_bundle(ScriptedModel(["fine"]).model).agent, "hi",
                            deps=make_deps(tmp_path), history=[], frontend=frontend,
                            on_checkpoint=broken)  # fmt: skip
    assert result.ok and result.output == "fine"
    warnings = [s.message for s in frontend.of("status")]
    assert warnings == ["could not save the session: disk full"]  # once, not per checkpoint


async def test_an_approved_call_is_written_as_running_before_it_runs(tmp_path: Path) -> None:
    """The command itself reads the store while it runs: its decision is already there."""
    import sys

    db = tmp_path / "s.db"
    peek = (
        f"{sys.executable} -c \"import sqlite3; print(sqlite3.connect('{db}')"
        ".execute('SELECT state, decision FROM tool_runs').fetchall(), sqlite3.connect("
        f"'{db}').execute('SELECT pending IS NULL FROM sessions').fetchall())\""
    )
    model = ScriptedModel([Call("run_shell_command", {"cmd": peek}, "c1")], ["Seen."])
    store = SessionStore(db)
    rec = SessionRecorder(store, "s1", cwd=tmp_path)
    rec.begin_turn("peek")
    result = await run_turn(
        make_bundle(model.model).agent,
        "peek",
        deps=make_deps(tmp_path),
        history=[],
        frontend=RecordingFrontend([ApprovalDecision.APPROVE]),
        on_checkpoint=rec.checkpoint,
        journal=rec,
    )
    assert result.ok and result.save_error is None
    output = str(tool_returns(result.messages)[0].content)
    assert "[('running', 'approve')] [(1,)]" in output  # running, and no longer pending
    # Once it returned, the journal holds its result too.
    row = sqlite3.connect(db).execute("SELECT state, result FROM tool_runs").fetchone()
    assert row[0] == "done" and "[('running', 'approve')]" in row[1]
