"""Signs of life, as a user sees them: what runs and for how long, a command's last lines
while it runs (escape codes shown, never acted on), the "thought for N s" line, Ctrl+T on a
narrow screen, and the "↓ new output" marker when output lands below what the user reads."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from co_tui.protocol import events as ev
from co_tui.sandbox import SandboxChoice
from co_tui.tui.app import CoApp
from co_tui.tui.widgets.thought import Thought
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.helpers import engine_unavailable
from tests.sandbox.conftest import make_workspace
from tests.tui.helpers import (
    drawn,
    make_app,
    on_screen,
    rendered,
    settle,
    text_stream,
    thinking,
    wait_until,
)

NARROW = (80, 24)
# Prints, then waits for the file `go` (the test makes it once it saw the first lines).
WAITS_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done; echo second"


async def send(pilot: Any, app: CoApp, text: str) -> None:
    assert await app.wait_ready()
    app.chat.prompt.text = text
    await pilot.press("enter")


def live_block(app: CoApp) -> ToolCallBlock:
    return app.chat.transcript.query_one(ToolCallBlock)


async def lines_show_before_the_command_ends(app: CoApp, workspace: Path, pilot: Any) -> None:
    """`!cmd` prints two lines, then waits: they show in its block while it runs; once it
    ends, its result replaces them."""
    await send(pilot, app, f"!echo first; echo 'step 2 of 9'; {WAITS_FOR_GO}")
    await wait_until(pilot, lambda: app.chat.transcript.query(ToolCallBlock), "the tool block")
    block = live_block(app)
    await wait_until(pilot, lambda: "step 2 of 9" in rendered(block), "the live lines")
    assert block.status == "running" and app.busy  # the command has not ended
    assert "first" in rendered(block)
    assert "running `echo first" in rendered(app.chat.activity_line)
    (workspace / "go").touch()
    await settle(pilot, app)
    assert block.status == "ok"
    assert not block.query_one(".tool-live").display  # the result stands for the lines
    assert "second" in rendered(block)
    assert not app.chat.activity_line.display


async def test_a_running_command_streams_its_last_lines(tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await lines_show_before_the_command_ends(app, tmp_path, pilot)


@pytest.mark.bwrap
async def test_a_running_command_streams_its_last_lines_from_bwrap() -> None:
    from co_tui.sandbox.bwrap import BwrapSandbox, probe

    workspace = make_workspace()
    try:
        if why := probe(workspace):
            engine_unavailable(why)
        choice = SandboxChoice(BwrapSandbox(workspace), "test sandbox")
        app = make_app(text_stream("unused"), workspace, sandbox_choice=choice)
        async with app.run_test(size=NARROW) as pilot:
            await lines_show_before_the_command_ends(app, workspace, pilot)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


async def test_escape_codes_in_live_output_are_shown_not_sent(tmp_path: Path) -> None:
    """A hostile command clears the screen, sets the title and rings the bell while it runs:
    its live lines show those codes as escapes, and none reaches the terminal."""
    hostile = r"printf '\033[2J\033]0;pwned\007\033[31mred\n'"
    app = make_app(text_stream("unused"), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await send(pilot, app, f"!{hostile}; {WAITS_FOR_GO}")
        await wait_until(pilot, lambda: app.chat.transcript.query(ToolCallBlock), "the block")
        live = live_block(app).query_one(".tool-live")
        await wait_until(pilot, lambda: "red" in rendered(live), "the live line")
        drawn_text = [segment.text for strip in on_screen(live) for segment in strip]
        assert not any("\x1b" in text or "\x07" in text for text in drawn_text)
        assert "\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31mred" in rendered(live)
        (tmp_path / "go").touch()
        await settle(pilot, app)


# -- the activity line --
async def test_nothing_running_no_activity_line(tmp_path: Path) -> None:
    app = make_app(text_stream("Hello."), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        assert await app.wait_ready()
        assert not app.chat.activity_line.display
        await send(pilot, app, "hi")
        await settle(pilot, app)
        assert not app.chat.activity_line.display  # gone with the turn, its timer with it


async def test_thinking_then_thought_for_n_seconds_that_unfolds(tmp_path: Path) -> None:
    said = "Weighing Monday against Friday."

    async def thinks(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        yield thinking(said)
        yield "Monday."

    app = make_app(thinks, tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await send(pilot, app, "when?")
        await settle(pilot, app)
        thought = app.chat.transcript.query_one(Thought)
        assert "thought for 1s" in rendered(thought)  # under a second reads as one
        assert said not in rendered(thought)  # folded
        await pilot.click(".thought CollapsibleTitle")
        await pilot.pause()
        assert said in rendered(thought)
        title = thought.query_one("CollapsibleTitle")
        title.focus()
        await pilot.press("enter")  # the keyboard folds it again
        await pilot.pause()
        assert said not in rendered(thought)


async def test_the_thinking_activity_then_the_answer(tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        assert await app.wait_ready()
        sid = app.session_id
        app.frontend.emit(ev.TurnStart(session_id=sid, prompt="plan"))
        app.frontend.emit(ev.ThinkingStart(session_id=sid))
        await drawn(pilot, app)
        assert "thinking…" in rendered(app.chat.activity_line)
        app.frontend.emit(ev.ThinkingEnd(session_id=sid, content="hm", duration_s=3.2))
        app.frontend.emit(ev.TextStart(session_id=sid))
        await drawn(pilot, app)
        assert "answering…" in rendered(app.chat.activity_line)
        app.frontend.emit(ev.TurnEnd(session_id=sid))
        await drawn(pilot, app)
        assert not app.chat.activity_line.display
        assert "thought for 3s" in rendered(app.chat.transcript.query_one(Thought))


# -- Ctrl+T on a narrow screen --
async def test_ctrl_t_twice_at_80_columns_leaves_no_overlay(tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        assert await app.wait_ready()
        chat = app.chat
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert chat.sidebar.display and chat.sidebar.show_thinking
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not chat.sidebar.display and not chat.sidebar.show_thinking
        # Shown by the user (Ctrl+B), the sidebar stays when thinking is turned off.
        await pilot.press("ctrl+b", "ctrl+t", "ctrl+t")
        await pilot.pause()
        assert chat.sidebar.display and not chat.sidebar.show_thinking


# -- "↓ new output" --
LONG = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(1, 30))


async def test_output_below_while_reading_above_shows_a_marker_and_end_follows(
    tmp_path: Path,
) -> None:
    app = make_app(text_stream(LONG), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await send(pilot, app, "a long answer")
        await settle(pilot, app)
        chat = app.chat
        assert not chat.new_output.display  # it followed the answer: nothing unseen
        await pilot.press("pageup", "pageup")
        await send(pilot, app, "!echo fresh output")
        await settle(pilot, app)
        assert chat.new_output.display
        assert chat.transcript.scroll_y < chat.transcript.max_scroll_y  # not moved for it
        await pilot.press("end")
        await pilot.pause()
        assert chat.transcript.scroll_y == chat.transcript.max_scroll_y
        assert not chat.new_output.display
        assert "fresh output" in rendered(chat.transcript)


async def test_a_click_on_the_marker_goes_down_and_end_keeps_its_use_in_the_prompt(
    tmp_path: Path,
) -> None:
    app = make_app(text_stream(LONG), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await send(pilot, app, "a long answer")
        await settle(pilot, app)
        chat = app.chat
        await pilot.press("pageup")
        await send(pilot, app, "!echo fresh output")
        await settle(pilot, app)
        assert chat.new_output.display
        chat.prompt.text = "draft"
        chat.prompt.move_cursor((0, 0))
        await pilot.press("end")  # the cursor had somewhere to go: End is the prompt's
        assert chat.prompt.cursor_location == (0, 5) and chat.new_output.display
        await pilot.click("#new-output")
        await pilot.pause()
        assert not chat.new_output.display
        assert chat.transcript.scroll_y == chat.transcript.max_scroll_y
