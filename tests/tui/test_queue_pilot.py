"""The prompt stays live during a turn: what is sent then is queued, shown above the prompt,
and sent one by one (each its own turn, in order) when the turn ends; Up or Esc takes the
last one back; cancelling the turn sends none of them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from co_tui.tui.widgets.tool_call import ToolCallBlock
from co_tui.tui.widgets.user_message import UserMessage
from tests.helpers import user_prompts
from tests.tui.helpers import SIZE, make_app, rendered, settle, wait_until


class Gate:
    """A model whose answer to "first" waits until the test opens the gate."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.seen: list[str] = []

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        prompt = user_prompts(messages)[-1]
        self.seen.append(prompt)
        if prompt == "first":
            yield "working on it… "
            await self.open.wait()
        yield f"answer to {prompt}"


async def type_text(pilot: Any, text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


async def first_turn_running(pilot: Any, app: Any, gate: Gate) -> None:
    assert await app.wait_ready()
    app.chat.prompt.text = "first"
    await pilot.press("enter")
    await wait_until(pilot, lambda: gate.seen == ["first"], "the first turn to reach the model")
    assert app.turn_running


@pytest.mark.slow
async def test_messages_sent_during_a_turn_wait_and_go_in_order(tmp_path: Path) -> None:
    gate = Gate()
    app = make_app(gate.stream, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await first_turn_running(pilot, app, gate)
        await type_text(pilot, "second")
        assert app.chat.prompt.text == "second"  # typing works while the turn runs
        await pilot.press("enter")
        await type_text(pilot, "third")
        await pilot.press("enter")
        await pilot.pause()
        assert app.chat.prompt.queued == ("second", "third")
        assert app.chat.prompt.text == ""
        assert app.chat.queued.display
        shown = rendered(app.chat.queued)
        assert "queued: second" in shown and "queued: third" in shown
        assert gate.seen == ["first"] and app.turn_running

        gate.open.set()
        await settle(pilot, app)
        assert gate.seen == ["first", "second", "third"]
        assert user_prompts(app.session.history) == ["first", "second", "third"]
        users = [w.text for w in app.chat.transcript.items if isinstance(w, UserMessage)]
        assert users == ["first", "second", "third"]
        assert app.session.last_answer == "answer to third"
        assert not app.chat.queued.display


async def test_esc_takes_the_last_queued_message_back_then_cancels(tmp_path: Path) -> None:
    gate = Gate()
    app = make_app(gate.stream, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await first_turn_running(pilot, app, gate)
        await type_text(pilot, "second")
        await pilot.press("enter")
        await pilot.pause()
        assert app.chat.prompt.queued == ("second",)
        await pilot.press("escape")
        await pilot.pause()
        assert app.chat.prompt.queued == ()
        assert app.chat.prompt.text == "second"
        assert app.turn_running  # Esc took the message back; it did not cancel
        await pilot.press("escape")  # nothing queued: now Esc cancels the turn
        await settle(pilot, app)
        assert not app.turn_running
        assert gate.seen == ["first"]
        assert app.chat.prompt.text == "second"


@pytest.mark.slow
async def test_up_on_an_empty_prompt_takes_the_last_one_back(tmp_path: Path) -> None:
    gate = Gate()
    app = make_app(gate.stream, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await first_turn_running(pilot, app, gate)
        for text in ("second", "third"):
            await type_text(pilot, text)
            await pilot.press("enter")
        await pilot.press("up")
        await pilot.pause()
        assert app.chat.prompt.text == "third"
        assert app.chat.prompt.queued == ("second",)
        await type_text(pilot, " edited")
        await pilot.press("enter")
        gate.open.set()
        await settle(pilot, app)
        assert gate.seen == ["first", "second", "third edited"]


@pytest.mark.slow
async def test_shell_and_slash_commands_queue_too(tmp_path: Path) -> None:
    gate = Gate()
    app = make_app(gate.stream, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await first_turn_running(pilot, app, gate)
        for text in ("!echo from-the-queue", "/history", "second"):
            app.chat.prompt.text = text
            await pilot.press("enter")
        await pilot.pause()
        assert app.chat.prompt.queued == ("!echo from-the-queue", "/history", "second")
        assert not list(app.chat.query(ToolCallBlock))
        gate.open.set()
        await settle(pilot, app)
        (bang,) = app.chat.query(ToolCallBlock)
        assert bang.status == "ok" and "from-the-queue" in rendered(bang)
        assert gate.seen == ["first", "second"]
        history = [w for w in app.chat.transcript.items if "turn(s)" in rendered(w)]
        assert history, "/history ran"
        # /history ran after the first turn and before the second: it counted one turn.
        assert "1 turn(s)" in rendered(history[0])


@pytest.mark.slow
async def test_cancelling_the_turn_sends_nothing_that_was_queued(tmp_path: Path) -> None:
    gate = Gate()
    app = make_app(gate.stream, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await first_turn_running(pilot, app, gate)
        for text in ("second", "third"):
            await type_text(pilot, text)
            await pilot.press("enter")
        await pilot.press("ctrl+c")
        await settle(pilot, app)
        assert gate.seen == ["first"]
        assert app.chat.prompt.queued == ()
        assert app.chat.prompt.text == "second\nthird"  # back in the prompt, to edit or send
