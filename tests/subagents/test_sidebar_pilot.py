"""Pilot tests: the real app delegates to two concurrent sub-agents; they show in the
sidebar only, their answers reach the parent, and Escape cancels both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from co_tui.tui.widgets.assistant_message import AssistantMessage
from co_tui.tui.widgets.subagents import SubagentBlock
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.subagents.scripts import (
    ANSWER_A,
    ANSWER_B,
    PARENT_PROMPT,
    TASK_A,
    TASK_B,
    DelegatingScript,
)
from tests.tui.helpers import SIZE, make_app, settle

WIDE = (140, 40)


def transcript_answers(app: Any) -> str:
    return "\n".join(w.text for w in app.chat.transcript.items if isinstance(w, AssistantMessage))


def blocks(app: Any) -> dict[str, SubagentBlock]:
    return dict(app.chat.sidebar.subagents.blocks)


async def submit(pilot: Any, app: Any, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")


async def test_subagents_show_in_sidebar_not_transcript(tmp_path: Path) -> None:
    script = DelegatingScript()
    app = make_app(script.stream, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await submit(pilot, app, PARENT_PROMPT)
        await settle(pilot, app)
        found = blocks(app)
        assert sorted(b.state.task for b in found.values()) == [TASK_A, TASK_B]
        assert app.session_id not in found
        for block in found.values():
            assert block.state.status == "done"
            assert block.state.requests >= 1
            assert block.state.input_tokens + block.state.output_tokens > 0
            assert block.collapsed  # collapsible, closed until the user opens it
        alpha = next(b for b in found.values() if b.state.task == TASK_A)
        assert [t[0] for t in alpha.state.tools.values()] == ["list_memories"]
        assert alpha.state.tools["lm-a"][2] == "ok"
        assert ANSWER_A in alpha.state.note  # its answer is in its block...

        text = transcript_answers(app)
        assert text.startswith("Let me ask two helpers.")
        assert "child thinking aloud" not in text.split("Combined:")[0]  # ...not streamed here
        assert ANSWER_A in app.session.last_answer and ANSWER_B in app.session.last_answer
        calls = [b.tool_name for b in app.query(ToolCallBlock)]
        assert calls == ["delegate", "delegate"]  # only the parent's calls in the transcript
        # The turn's usage includes the sub-agents' requests: 2 parent + 2 + 1.
        assert "5 request(s)" in str(app.chat.sidebar._usage_view.render())

        # A block opens to show task, status, tools and tokens.
        alpha.collapsed = False
        await pilot.pause()
        body = str(alpha._body.render())
        assert TASK_A in body and "done" in body and "list_memories" in body
        assert "request(s)" in body


async def test_escape_cancels_both_subagents(tmp_path: Path) -> None:
    script = DelegatingScript(block=True)
    app = make_app(script.stream, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, PARENT_PROMPT)
        for _ in range(300):
            await pilot.pause(0.01)
            if script.blocked == 2:
                break
        assert script.blocked == 2
        # Both are running, side by side, before either finishes.
        assert [b.state.status for b in blocks(app).values()] == ["running", "running"]
        await pilot.press("escape")
        await settle(pilot, app)
        assert not app.turn_running
        assert script.active == 0 and script.cancelled == 2
        assert [b.state.status for b in blocks(app).values()] == ["interrupted", "interrupted"]
        assert ANSWER_A not in transcript_answers(app)
