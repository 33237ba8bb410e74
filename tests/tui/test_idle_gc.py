"""Full garbage collections wait until the app is idle, run on Python's own schedule (not
after every answer), and the setting is undone on exit."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from co_tui.tui.terminal import idle_gc
from tests.tui.helpers import SIZE, make_app, settle, text_stream, wait_until


@contextmanager
def full_collections() -> Iterator[list[int]]:
    """The generation-2 collections that start while inside, as they happen."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)


@pytest.fixture(autouse=True)
def quick_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(idle_gc, "IDLE_S", 0.05)


async def test_start_up_is_frozen_once_loaded_without_walking_the_heap(tmp_path: Path) -> None:
    before = gc.get_threshold()
    app = make_app(text_stream("answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert gc.get_threshold()[2] == idle_gc.NEVER  # none automatic from here on
        assert gc.get_freeze_count() == 0
        with full_collections() as seen:
            assert await app.wait_ready()
            await wait_until(pilot, lambda: gc.get_freeze_count() > 0, "start-up to be frozen")
        assert seen == []  # young generations only: no full walk just after loading
    assert gc.get_threshold() == before


async def test_collections_paused_for_start_up_resume_at_the_first_frame_frozen(
    tmp_path: Path,
) -> None:
    """The console script pauses collections before it imports anything; at the first frame
    what start-up made is frozen, not walked, and collections resume."""
    paused_collections: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and not gc.isenabled():
            paused_collections.append(info["generation"])

    app = make_app(text_stream("answer"), tmp_path)
    gc.callbacks.append(note)
    idle_gc.pause_collections()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, gc.isenabled, "collections to resume")
            assert gc.get_freeze_count() > 0
            assert await app.wait_ready()
    finally:
        gc.callbacks.remove(note)
        gc.enable()
    assert paused_collections == []
    assert gc.get_freeze_count() == 0  # given back on exit


async def test_a_short_answer_costs_no_full_collection_until_one_is_due(tmp_path: Path) -> None:
    app = make_app(text_stream("answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await wait_until(pilot, lambda: gc.get_freeze_count() > 0, "the start-up collection")
        with full_collections() as seen:
            app.chat.prompt.text = "hi"
            await pilot.press("enter")
            await settle(pilot, app)
            await pilot.pause(idle_gc.IDLE_S * 4)
            assert seen == []  # a short turn: Python would not have collected either
            for _ in range(idle_gc.FULL_AFTER_YOUNG):
                gc.collect(1)  # what a long answer's allocations do
            app.chat.prompt.text = "again"
            await pilot.press("enter")
            await settle(pilot, app)
            await wait_until(pilot, lambda: seen, "the idle collection once one is due")
            assert not app.turn_running


async def test_items_let_go_after_being_frozen_are_freed(tmp_path: Path) -> None:
    """A frozen object is never collected: once the transcript lets items go (here /clear),
    the next idle collection unfreezes first and frees them."""
    from co_tui.tui.widgets.assistant_message import AssistantMessage

    app = make_app(text_stream("answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await wait_until(pilot, lambda: gc.get_freeze_count() > 0, "the start-up collection")
        app.chat.prompt.text = "hi"
        await pilot.press("enter")
        await settle(pilot, app)
        # Not query_one: Textual's query cache would keep the widget.
        (answer,) = [w for w in app.chat.transcript.items if isinstance(w, AssistantMessage)]
        shown = weakref.ref(answer)
        del answer
        with full_collections() as seen:
            for _ in range(idle_gc.FULL_AFTER_YOUNG):
                gc.collect(1)
            app.chat.prompt.text = "again"
            await pilot.press("enter")
            await settle(pilot, app)
            await wait_until(pilot, lambda: seen, "the idle collection that freezes the answer")
        app.chat.prompt.text = "/clear"
        await pilot.press("enter")
        await wait_until(pilot, lambda: shown() is None, "the cleared answer freed")


def held_stream(release: asyncio.Event) -> Any:
    """An answer that streams its first words, then waits for `release`: a long answer."""

    async def stream(messages: list[Any], info: Any) -> AsyncIterator[str]:
        yield "the first words of a long answer "
        await release.wait()
        yield "and its end"

    return stream


async def test_a_long_answer_gets_due_full_collections_while_it_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cycles made while an answer streams are freed during it, not when it ends (a
    10-minute answer grew the app by hundreds of MB); nothing is frozen meanwhile. Start-up's
    own idle collection, asked for while the turn runs, does not stop them."""
    monkeypatch.setattr(idle_gc, "BUSY_CHECK_S", 0.05)
    release = asyncio.Event()
    app = make_app(held_stream(release), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await wait_until(pilot, lambda: gc.get_freeze_count() > 0, "the start-up collection")
        app.chat.prompt.text = "a long one"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.turn_running, "the turn to start")
        app.idle_gc.idle_soon()  # what start-up or released items ask for meanwhile
        frozen = gc.get_freeze_count()
        with full_collections() as seen:
            for _ in range(idle_gc.FULL_AFTER_YOUNG):
                gc.collect(1)  # what a long answer's allocations do
            await wait_until(pilot, lambda: seen, "a full collection while the answer streams")
            assert app.turn_running
            # Nothing newly frozen (frozen objects can still be freed by their refcount).
            assert gc.get_freeze_count() <= frozen
        release.set()
        await settle(pilot, app)


async def test_turns_sent_back_to_back_get_the_due_collection_as_the_next_one_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no idle moment between turns (a script, a fast typist) the idle collection never
    came: 200 such turns grew the app from 160 to 279 MB. A due one runs as the next turn
    starts, before its request."""
    monkeypatch.setattr(idle_gc, "IDLE_S", 1000.0)  # never idle long enough
    app = make_app(text_stream("answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        app.chat.prompt.text = "first"
        await pilot.press("enter")
        await settle(pilot, app)
        for _ in range(idle_gc.FULL_AFTER_YOUNG):
            gc.collect(1)  # what a long answer's allocations do
        with full_collections() as seen:
            app.chat.prompt.text = "second"
            await pilot.press("enter")
            await wait_until(pilot, lambda: seen, "the due collection as the turn starts")
            await settle(pilot, app)
