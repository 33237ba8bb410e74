"""A large paste folds into one line in the prompt; what is sent carries all of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo
from textual import events

from co_tui.tui.widgets.user_message import UserMessage
from tests.helpers import user_prompts
from tests.tui.helpers import SIZE, make_app, rendered, settle, wait_until

LOG = "\n".join(f"2024-05-01 12:00:{n % 60:02} worker-{n} finished" for n in range(2000))
LABEL = "[Pasted text #1 +2000 lines]"


def recording(seen: list[list[ModelMessage]]) -> Any:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        seen.append(list(messages))
        yield "read it"

    return fn


async def paste(pilot: Any, text: str) -> None:
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()


async def type_text(pilot: Any, text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


async def test_a_large_paste_is_one_line_and_the_question_after_it_stays_visible(
    tmp_path: Path,
) -> None:
    seen: list[list[ModelMessage]] = []
    history = tmp_path / "history"
    app = make_app(recording(seen), tmp_path, history_path=history)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await app.wait_ready()
        prompt = app.chat.prompt
        await paste(pilot, LOG)
        await type_text(pilot, " why did worker-7 stop?")
        assert prompt.text == f"{LABEL} why did worker-7 stop?"
        shown = rendered(prompt)
        assert LABEL in shown and "why did worker-7 stop?" in shown
        await pilot.press("enter")
        await settle(pilot, app)
        assert user_prompts(seen[-1])[-1] == f"{LOG} why did worker-7 stop?"
        message = app.chat.transcript.items[0]
        assert isinstance(message, UserMessage) and message.folded
        assert LABEL in rendered(message) and "why did worker-7 stop?" in rendered(message)
        assert "worker-1999" not in rendered(message)
        await pilot.click(message)
        await wait_until(pilot, lambda: not message.folded, "the message to unfold")
        assert app.prompt_history.entries[-1] == f"{LOG} why did worker-7 stop?"


async def test_a_terminal_paste_with_cr_line_breaks_counts_its_lines(tmp_path: Path) -> None:
    seen: list[list[ModelMessage]] = []
    app = make_app(recording(seen), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await paste(pilot, LOG.replace("\n", "\r"))  # as tmux and most terminals send it
        assert app.chat.prompt.text == LABEL
        await pilot.press("enter")
        await settle(pilot, app)
        assert user_prompts(seen[-1])[-1] == LOG


async def test_a_small_paste_goes_in_as_it_is(tmp_path: Path) -> None:
    app = make_app(recording([]), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await paste(pilot, "one\ntwo\nthree")
        assert app.chat.prompt.text == "one\ntwo\nthree"


async def test_backspace_after_the_label_removes_the_paste(tmp_path: Path) -> None:
    seen: list[list[ModelMessage]] = []
    app = make_app(recording(seen), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        prompt = app.chat.prompt
        await type_text(pilot, "look: ")
        await paste(pilot, LOG)
        assert prompt.text == f"look: {LABEL}"
        await pilot.press("backspace")
        assert prompt.text == "look: "
        await paste(pilot, "x" * 1500)
        second = "[Pasted text #2 1500 chars]"
        assert prompt.text == f"look: {second}"
        await pilot.press("home", "right", "right", "right", "right", "right", "right")
        await pilot.press("delete")  # right before the label: it goes whole
        assert prompt.text == "look: "
        await type_text(pilot, "only this")
        await pilot.press("enter")
        await settle(pilot, app)
        assert user_prompts(seen[-1])[-1] == "look: only this"


async def test_a_label_edited_by_hand_is_sent_as_it_reads(tmp_path: Path) -> None:
    seen: list[list[ModelMessage]] = []
    app = make_app(recording(seen), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await paste(pilot, LOG)
        await pilot.press("left", "left", "x")  # inside the label: it stands for nothing now
        await pilot.press("enter")
        await settle(pilot, app)
        sent = user_prompts(seen[-1])[-1]
        assert sent == "[Pasted text #1 +2000 linexs]" and "worker-" not in sent


async def test_a_paste_queued_behind_a_turn_is_sent_whole(tmp_path: Path) -> None:
    seen: list[list[ModelMessage]] = []
    app = make_app(recording(seen), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        app.chat.busy = True  # as while a turn runs: what is sent waits in the queue
        await paste(pilot, LOG)
        await pilot.press("enter")
        assert app.chat.prompt.queued == (LABEL,)
        assert LABEL in rendered(app.chat.queued)
        app.chat.busy = False
        await settle(pilot, app)
        assert user_prompts(seen[-1])[-1] == LOG


async def test_a_paste_that_reads_like_a_label_is_not_expanded_twice(tmp_path: Path) -> None:
    seen: list[list[ModelMessage]] = []
    app = make_app(recording(seen), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await paste(pilot, LOG)
        tricky = "[Pasted text #1 +2000 lines]\n" * 12  # names the first paste's label
        await paste(pilot, tricky)
        await pilot.press("enter")
        await settle(pilot, app)
        assert user_prompts(seen[-1])[-1] == LOG + tricky
