"""A large paste folds into one line in the prompt; what is sent carries all of it."""

from __future__ import annotations

import json
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


async def test_up_brings_a_prompt_with_a_paste_back_folded_in_this_and_the_next_session(
    tmp_path: Path,
) -> None:
    seen: list[list[ModelMessage]] = []
    history = tmp_path / "history"
    secret_log = f"{LOG}\napi_key=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
    app = make_app(recording(seen), tmp_path, history_path=history)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await app.wait_ready()
        await paste(pilot, secret_log)
        await type_text(pilot, " why?")
        await pilot.press("enter")
        await settle(pilot, app)
        await paste(pilot, "x" * 1500)  # a paste of the next draft: its own label stays its own
        draft = app.chat.prompt.text
        await pilot.press("up")
        recalled = app.chat.prompt.text
        assert recalled.endswith(" why?") and len(recalled.splitlines()) == 1
        assert recalled.startswith("[Pasted text #3 +2001 lines]")  # numbered after the draft's
        await pilot.press("down")
        assert app.chat.prompt.text == draft
        await pilot.press("up", "enter")  # sent again: the paste goes with it, unfolded
        await settle(pilot, app)
        assert user_prompts(seen[-1])[-1] == f"{secret_log} why?"
    assert "sk-proj-abcdefghijklmnop" not in history.read_text(encoding="utf-8")

    again = make_app(recording(seen), tmp_path, history_path=history)
    async with again.run_test(size=(80, 24)) as pilot:
        assert await again.wait_ready()
        await pilot.press("up")
        assert again.chat.prompt.text == "[Pasted text #1 +2001 lines] why?"
        await pilot.press("enter")
        await settle(pilot, again)
        sent = user_prompts(seen[-1])[-1]
        assert sent.startswith(LOG) and sent.endswith(" why?")  # redacted, as history is
        assert "sk-proj-abcdefghijklmnop" not in sent


def test_a_history_line_that_is_not_a_folded_prompt_is_skipped(tmp_path: Path) -> None:
    from co_tui.tui.widgets.prompt import PromptHistory

    label = "[Pasted text #4 +2 lines]"
    good = {"folded": f"{label} q", "pastes": [{"label": label, "text": "a\nb"}]}
    lines = [
        json.dumps("plain"),
        json.dumps({"folded": "x", "pastes": [{"label": "\x1b[2J", "text": "a"}]}),
        json.dumps({"folded": 5, "pastes": []}),
        json.dumps([1, 2]),
        json.dumps(good),
    ]
    path = tmp_path / "history"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    history = PromptHistory(path)
    assert history.entries == ["plain", "a\nb q"]
    folded = history.folded("a\nb q")
    assert folded is not None and folded.text == f"{label} q"
