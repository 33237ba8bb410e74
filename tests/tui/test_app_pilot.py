"""Pilot tests: the real app, a FunctionModel agent, a SubprocessSandbox."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from co_tui.tui.screens.approval import ApprovalScreen
from co_tui.tui.widgets.assistant_message import AssistantMessage
from co_tui.tui.widgets.items import Note
from co_tui.tui.widgets.tool_call import ToolCallBlock
from co_tui.tui.widgets.user_message import UserMessage
from tests.helpers import user_prompts
from tests.tui.helpers import (
    SIZE,
    approval_dialog,
    last_tool_returns,
    make_app,
    settle,
    shell_then_text,
    text_stream,
)


def transcript_text(app: Any) -> str:
    parts = []
    for w in app.chat.transcript.items:
        if isinstance(w, AssistantMessage | UserMessage):
            parts.append(w.text)
    return "\n".join(parts)


async def submit(pilot: Any, app: Any, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")


async def test_streaming_text_lands_in_transcript(tmp_path: Path) -> None:
    chunks = ["# Title\n\n", "Hello ", "world", ".\n\n", "- one\n", "- two\n"]
    app = make_app(text_stream(*chunks), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "hi there")
        await settle(pilot, app)
        messages = list(app.query(AssistantMessage))
        assert len(messages) == 1
        assert messages[0].text == "".join(chunks)
        assert messages[0].is_settled
        assert app.session.last_answer == "".join(chunks)
        assert user_prompts(app.session.history) == ["hi there"]
        # the live tail is gone: only cheap renderables remain
        assert not list(messages[0].query("Markdown"))


@pytest.mark.slow
async def test_shell_call_opens_modal_and_y_runs_it(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("x")
    app = make_app(shell_then_text(["ls"], final="listed"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "list files")
        screen = await approval_dialog(pilot, app)
        assert screen.request.tool_name == "run_shell_command"
        assert screen.request.args == {"cmd": "ls"}
        await pilot.press("y")
        await settle(pilot, app)
        returns = [p for m in app.session.history for p in getattr(m, "parts", [])
                   if getattr(p, "part_kind", "") == "tool-return"]  # fmt: skip
        assert returns and "marker.txt" in str(returns[0].content)
        assert "marker.txt" in app.session.last_answer  # the output reached the model
        block = app.query_one(ToolCallBlock)
        assert block.status == "ok"


@pytest.mark.slow
async def test_n_denies_and_model_sees_denial(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch should-not-exist"], final="ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "make a file")
        await approval_dialog(pilot, app)
        await pilot.press("n")
        await settle(pilot, app)
        assert not (tmp_path / "should-not-exist").exists()
        assert "denied" in app.session.last_answer.lower()
        assert app.query_one(ToolCallBlock).status == "denied"


@pytest.mark.slow
async def test_a_approves_all_later_calls(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["echo one", "echo two; true"], final="ran"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "run two")
        screen = await approval_dialog(pilot, app)
        assert screen.request.index == 1 and screen.request.total == 2
        await pilot.press("a", "a")  # the second `a` confirms approving everything
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert app.session.deps.auto_confirm
        assert "one" in app.session.last_answer and "two" in app.session.last_answer
        # a later turn does not ask either
        await submit(pilot, app, "again")
        for _ in range(30):
            await pilot.pause()
            assert not isinstance(app.screen, ApprovalScreen)
        await settle(pilot, app)
        assert app.chat.status_bar.status.approve_all


def slow_stream(started: asyncio.Event) -> Any:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        if len(user_prompts(messages)) > 1:
            yield "second answer"
            return
        yield "partial "
        yield "answer "
        started.set()
        for _ in range(1000):
            await asyncio.sleep(0.01)
            yield "more "

    return fn


@pytest.mark.slow
async def test_cancel_mid_stream_keeps_valid_history(tmp_path: Path) -> None:
    started = asyncio.Event()
    app = make_app(slow_stream(started), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "first")
        await asyncio.wait_for(started.wait(), 5)
        await pilot.pause(0.1)
        assert app.turn_running
        await pilot.press("escape")
        await settle(pilot, app)
        assert not app.turn_running
        first = app.query(AssistantMessage).first()
        assert first.interrupted and first.text.startswith("partial answer")
        # Said right under the partial answer, as the transcript's next item.
        items = app.chat.transcript.items
        note = items[items.index(first) + 1]
        assert isinstance(note, Note) and "interrupted" in str(note._source)
        assert note.region.y == first.region.bottom
        await submit(pilot, app, "second")
        await settle(pilot, app)
        assert app.session.last_answer == "second answer"
        assert user_prompts(app.session.history) == ["first", "second"]


@pytest.mark.slow
async def test_ctrl_c_cancels_a_running_turn(tmp_path: Path) -> None:
    started = asyncio.Event()
    app = make_app(slow_stream(started), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "first")
        await asyncio.wait_for(started.wait(), 5)
        await pilot.press("ctrl+c")
        await settle(pilot, app)
        assert not app.turn_running
        assert app.is_running  # cancelling a turn does not exit


async def test_clear_empties(tmp_path: Path) -> None:
    app = make_app(text_stream("an answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        assert app.session.history
        await submit(pilot, app, "/clear")
        for _ in range(10):
            await pilot.pause()
        assert app.session.history == []
        assert not list(app.query(AssistantMessage))
        assert not list(app.query(UserMessage))


async def test_double_ctrl_c_exits(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_ready()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert any("again to exit" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_d_exits(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert not app.is_running


async def test_unused(tmp_path: Path) -> None:
    assert last_tool_returns([]) == []


async def test_enter_right_after_fast_typing_sends_everything_typed(tmp_path: Path) -> None:
    from textual import events

    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        keys = [events.Key("space" if c == " " else c, c) for c in "hello world"]
        for key in [*keys, events.Key("enter", "\r")]:  # one burst, as a terminal sends it
            key.set_sender(app)
            app._driver.send_message(key)  # type: ignore[union-attr]
        for _ in range(40):
            await pilot.pause(0.05)
            if app.session.history:
                break
        await settle(pilot, app)
        assert user_prompts(app.session.history) == ["hello world"]
        assert app.chat.prompt.text == ""


async def test_answer_before_a_tool_call_is_on_screen_under_the_approval_dialog(
    tmp_path: Path,
) -> None:
    from tests.serve.scripted import _stream

    app = make_app(_stream, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await submit(pilot, app, "please")
        await approval_dialog(pilot, app, armed=False)
        (answer,) = app.chat.query(AssistantMessage)
        assert "STREAM-OK" in answer.text
        assert answer.is_settled and answer.region.height >= 1
