"""A long conversation as a user works in it: /find counts each occurrence, jumps to an
early turn by mounting a window around it (not every item down to it), scrolling on from
there in both directions, and a prompt typed after Esc while the app is busy is sent."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from textual import events

from co_tui.protocol import events as ev
from co_tui.tui.widgets.find_bar import FindBar
from co_tui.tui.widgets.transcript import (
    MAX_ITEMS,
    PRUNE_BATCH,
    WINDOW_AFTER,
    WINDOW_BEFORE,
    restored_items,
)
from co_tui.tui.widgets.user_message import UserMessage
from tests.helpers import user_prompts
from tests.tui.helpers import SIZE, make_app, rendered, settle, text_stream, wait_until

SID = "11111111-2222-3333-4444-555555555555"
TURNS = 1_000
WINDOW = WINDOW_BEFORE + WINDOW_AFTER + 1
TURNS_PAGED = 100  # 200 items: 140 archived, in 7 batches


def conversation(turns: int, answer: str = "answer {n}\n\nmore words {n}") -> list[Any]:
    events_: list[ev.TurnEvent] = []
    for n in range(turns):
        prompt = f"zanzibar {n}" if n == 3 else f"question {n}"
        events_.append(ev.TurnStart(session_id=SID, prompt=prompt, replayed=True))
        events_.append(ev.TextEnd(session_id=SID, content=answer.format(n=n)))
    return events_


async def restored(pilot: Any, events_: list[Any]) -> Any:
    app = pilot.app
    assert await app.wait_ready()
    app.chat.transcript.load_items(restored_items(events_))
    await pilot.pause()
    await app.chat.transcript.layout_settled()
    return app.chat.transcript


async def find(pilot: Any, query: str) -> FindBar:
    app = pilot.app
    bar: FindBar = app.chat.query_one(FindBar)
    await pilot.press("ctrl+f")
    await wait_until(pilot, lambda: bar.display and bar.field.has_focus, "the find bar")
    bar.field.value = query
    return bar


def status(bar: FindBar) -> str:
    return str(bar.status.render())


def found(app: Any) -> Any:
    marked = list(app.chat.transcript.query(".-found"))
    assert len(marked) == 1
    return marked[0]


def on_screen(transcript: Any, widget: Any) -> bool:
    return transcript.region.y <= widget.region.y < transcript.region.bottom


async def test_find_counts_each_occurrence_not_each_item(tmp_path: Path) -> None:
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        events_ = conversation(4)
        events_.append(ev.TextEnd(session_id=SID, content="echo echo, and echo again"))
        await restored(pilot, events_)
        bar = await find(pilot, "ECHO")
        await wait_until(pilot, lambda: status(bar) == "1 of 3", "1 of 3: three occurrences")
        answer = found(app)
        for position in (2, 3):
            await pilot.press("enter")
            await wait_until(pilot, lambda p=position: status(bar) == f"{p} of 3", f"{position}")
            assert found(app) is answer  # the same answer, its next occurrence
        await pilot.press("enter")
        await wait_until(pilot, lambda: status(bar) == "1 of 3", "round to the first")


async def test_find_jumps_to_an_early_turn_with_a_window_and_scrolls_on(tmp_path: Path) -> None:
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await restored(pilot, conversation(TURNS))
        bar = await find(pilot, "zanzibar")
        await wait_until(pilot, lambda: status(bar) == "1 of 1", "turn 3 found")
        await pilot.pause()
        await transcript.layout_settled()
        match = found(app)
        assert isinstance(match, UserMessage) and match.text == "zanzibar 3"
        assert len(transcript.items) <= WINDOW  # a window, not 2,000 items
        assert on_screen(transcript, match)
        assert "later item(s)" in rendered(transcript) or transcript.max_scroll_y > 0
        # Up from the jump: the turns before it, down to the first.
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.chat.prompt.has_focus, "Esc: the prompt")
        for _ in range(3):
            await pilot.press("ctrl+home")
            await pilot.pause()
        await wait_until(pilot, lambda: "question 0" in rendered(transcript), "turn 0 shown")
        # Down from there: the window's later items come back as the view reaches them.
        before = newest_turn(transcript.items)
        for _ in range(40):
            await pilot.press("pagedown")
            await pilot.pause()
        await transcript.layout_settled()
        assert newest_turn(transcript.items) > before + 40
        shown = rendered(transcript)
        assert "question" in shown and "more words" in shown  # turns on screen, not a gap
        assert len(transcript.items) <= MAX_ITEMS + PRUNE_BATCH  # those above went back
        assert transcript._archived  # ... and come back when scrolled up to
        # Ctrl+End: the end of the conversation, followed again.
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: "more words 999" in rendered(transcript), "the end")
        assert len(transcript.items) <= MAX_ITEMS


async def test_find_typed_in_a_burst_shows_the_last_query(tmp_path: Path) -> None:
    """Keys that arrive together (fast typing, a paste through the terminal) are searched
    once, for what the field holds at the end: never left on an earlier prefix's match."""
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await restored(pilot, conversation(200, "answer {n} zebra\n\nwords"))
        bar: FindBar = app.chat.query_one(FindBar)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: bar.field.has_focus, "the find bar")
        # "z" alone matches every answer (the newest first); the whole word only turn 3.
        await pilot.press(*"zanzibar")
        await wait_until(pilot, lambda: status(bar) == "1 of 1", "the whole word's match")
        await pilot.pause()
        await transcript.layout_settled()
        match = found(app)
        assert isinstance(match, UserMessage) and match.text == "zanzibar 3"
        assert on_screen(transcript, match)
        await pilot.press(*["backspace"] * 8, "z", "e")
        await wait_until(pilot, lambda: status(bar) == "1 of 200", "'ze': every answer")
        assert on_screen(transcript, found(app))
        assert "answer 199 zebra" in rendered(transcript)


async def test_paging_up_through_archived_turns_skips_none(tmp_path: Path) -> None:
    """Page Up past the mounted items brings the archived ones back above the view: every
    turn passes by on screen, none is jumped over as a batch comes in."""
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await restored(pilot, conversation(TURNS_PAGED))
        seen = {int(n) for n in re.findall(r"question (\d+)\b", rendered(transcript))}
        for _ in range(TURNS_PAGED * 2):
            await pilot.press("pageup")
            await pilot.pause()
            await transcript.layout_settled()
            shown = rendered(transcript)
            seen.update(int(n) for n in re.findall(r"question (\d+)\b", shown))
            if 0 in seen or "zanzibar 3" in shown:
                break
        assert "zanzibar 3" in rendered(transcript) or 0 in seen, "the first turns reached"
        missing = [n for n in range(4, TURNS_PAGED) if n not in seen]
        assert not missing, f"turns never on screen while paging up: {missing[:20]}"


async def test_a_prompt_sent_from_a_find_window_shows_at_the_end_at_once(
    tmp_path: Path,
) -> None:
    """Sent while /find shows an early turn, the prompt is on screen at the end straight
    away, while the model has not answered yet (a slow local model takes tens of seconds)."""
    answer = asyncio.Event()

    async def slow_model(messages: Any, info: Any) -> Any:
        await answer.wait()
        yield "ok"

    app = make_app(slow_model, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await restored(pilot, conversation(TURNS))
        bar = await find(pilot, "zanzibar")
        await wait_until(pilot, lambda: status(bar) == "1 of 1", "turn 3 found")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.chat.prompt.has_focus, "Esc: the prompt")
        app.chat.prompt.text = "a new question"
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: "a new question" in rendered(transcript), "the sent prompt shown"
        )
        assert not answer.is_set()
        answer.set()
        await settle(pilot, app)


def newest_turn(items: list[Any]) -> int:
    return max(int(w.text.split()[-1]) for w in items if isinstance(w, UserMessage))


async def test_a_prompt_typed_after_esc_while_a_find_runs_is_sent(tmp_path: Path) -> None:
    """Keys typed while the app is busy arrive together: Esc, then a prompt and Enter. The
    prompt reaches the model and the history, not the closed find bar's field."""
    prompts: list[str] = []

    async def model(messages: Any, info: Any) -> Any:
        prompts.extend(user_prompts(messages)[-1:])
        yield "ok"

    app = make_app(model, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await restored(pilot, conversation(TURNS))
        bar = await find(pilot, "zanzibar")
        await wait_until(pilot, lambda: status(bar) == "1 of 1", "turn 3 found")
        keys = ["f3", "escape", *"hello there", "enter"]
        for key in keys:  # at once, as a busy app reads them from the terminal
            character = " " if key == " " else (key if len(key) == 1 else None)
            name = "space" if key == " " else key
            app.post_message(events.Key(name, character))
        await wait_until(pilot, lambda: "hello there" in prompts, "the prompt sent")
        await settle(pilot, app)
        assert bar.field.value == "zanzibar" and not bar.display
        assert "hello there" in app.chat.prompt.prompt_history.entries
        assert app.chat.prompt.text == ""
