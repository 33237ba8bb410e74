"""The layout at a narrow and a wide terminal. Update with
`pytest tests/tui/test_snapshots_layout.py --snapshot-update` and look at every SVG in
snapshots/test_snapshots_layout/ before accepting."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from co_tui.config.settings import Settings
from co_tui.protocol import events as ev
from co_tui.store.jobs_store import JobStore
from tests.jobs.helpers import a_proposal
from tests.tui.helpers import (
    approval_dialog,
    drawn,
    make_app,
    settle,
    shell_then_text,
    submit_for_snapshot,
    text_stream,
    wait_until,
)

NARROW = (80, 24)
WIDE = (200, 60)

PARTIAL_ANSWER = [
    "Here is a plan for the week:\n\n",
    "- **Monday**: review the inbox\n",
    "- **Tuesday**: write the report\n",
    "- **Wednesday**: ",
]


def test_narrow_streaming_answer(snap_compare: Any, tmp_path: Path) -> None:
    """80x24 mid-answer: no sidebar, the status bar says the turn runs and how to stop it."""
    halfway = asyncio.Event()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for chunk in PARTIAL_ANSWER:
            yield chunk
        halfway.set()
        await asyncio.Event().wait()  # still streaming when the picture is taken

    app = make_app(stream, tmp_path)

    async def run_before(pilot: Any) -> None:
        await submit_for_snapshot(pilot, "Plan my week.", settled=False)
        await wait_until(pilot, halfway.is_set, "the answer to stream halfway")
        await drawn(pilot, pilot.app)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=NARROW, run_before=run_before)


@pytest.mark.slow
def test_narrow_pending_approval(snap_compare: Any, tmp_path: Path) -> None:
    """80x24 with a decision waiting: the status bar says so in full."""
    app = make_app(shell_then_text(["rm -rf build/ && make"]), tmp_path)

    async def run_before(pilot: Any) -> None:
        await submit_for_snapshot(pilot, "Rebuild from scratch.", settled=False)
        await approval_dialog(pilot, pilot.app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=NARROW, run_before=run_before)


@pytest.mark.slow
def test_wide_with_sidebar(snap_compare: Any, tmp_path: Path) -> None:
    """200x60 after one answered turn, a second one under way: the sidebar beside the
    transcript (thinking, a finished call, one waiting for approval, no tokens yet this turn),
    the token totals and the context meter in the status bar."""
    settings = Settings(theme="textual-dark", verbose=True, context_window=32768)
    app = make_app(text_stream("Two notes: `old.md` and `todo.md`."), tmp_path, settings=settings)

    async def run_before(pilot: Any) -> None:
        chat = pilot.app.chat
        await submit_for_snapshot(pilot, "What is in my notes folder?", settled=False)
        await settle(pilot, pilot.app)
        fe, sid = pilot.app.frontend, pilot.app.session_id
        shell = "run_shell_command"
        fe.emit(ev.TurnStart(session_id=sid, prompt="and the oldest one?"))
        fe.emit(ev.ThinkingStart(session_id=sid))
        fe.emit(ev.ThinkingDelta(session_id=sid, content="The oldest note: list, then read."))
        fe.emit(ev.ThinkingEnd(session_id=sid, content=""))
        for cid, cmd in (("c1", "ls -t notes/"), ("c2", "cat notes/old.md")):
            fe.emit(
                ev.ToolCall(
                    session_id=sid,
                    tool_call_id=cid,
                    tool_name=shell,
                    args={"cmd": cmd},
                    key_arg=cmd,
                )
            )
        fe.emit(
            ev.ToolResult(
                session_id=sid,
                tool_call_id="c1",
                tool_name=shell,
                status="ok",
                content="old.md\ntodo.md",
                duration_s=0.2,
            )
        )
        await wait_until(pilot, lambda: "cat notes" in str(chat.sidebar._tools_view.render()), "c2")
        chat.sidebar.waiting_for_approval("c2", shell)
        chat.prompt.cursor_blink = False
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_narrow_with_proposals_waiting_in_the_inbox(snap_compare: Any, tmp_path: Path) -> None:
    """80x24 with two proposals of a job waiting: the status bar says so, and where."""
    store = JobStore()
    for position in (1, 2):
        assert store.propose(a_proposal(position))
    store.close()
    app = make_app(shell_then_text([]), tmp_path)

    async def run_before(pilot: Any) -> None:
        await wait_until(pilot, lambda: pilot.app.chat.status.inbox == 2, "the inbox count")
        await drawn(pilot, pilot.app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=NARROW, run_before=run_before)
