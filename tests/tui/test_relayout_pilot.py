"""What an update costs the screen. In Textual a layout pass reflows every widget on the
screen (a long transcript's included) and repaints what moved; new words that keep a
widget's height need only that widget repainted. These tests count the screen's layout
passes (its public `screen_layout_refresh_signal`) and read what the screen shows, so a
saved layout never costs a clipped or stale line."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo
from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from co_tui.tui.widgets.assistant_message import AssistantMessage
from co_tui.tui.widgets.readout import Readout
from tests.tui.helpers import SIZE, make_app, on_screen, settle, wait_until


class LayoutPasses:
    """Counts the layout passes of `screen` from now on."""

    def __init__(self, screen: Screen[Any]) -> None:
        self.count = 0
        screen.screen_layout_refresh_signal.subscribe(screen, self._passed, immediate=True)

    def _passed(self, _screen: Screen[Any]) -> None:
        self.count += 1


def shown_text(widget: Any) -> list[str]:
    return [strip.text.rstrip() for strip in on_screen(widget)]


class ReadoutApp(App[None]):
    CSS = "#auto { width: auto; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            for n in range(60):  # a screenful of other widgets, as a transcript has
                yield Static(f"item {n}")
        yield Readout(Text("turn    none yet\n        0 requests"), id="fixed")
        yield Readout("short", id="auto")


async def test_a_readout_repaints_new_words_and_lays_out_only_for_a_new_size() -> None:
    app = ReadoutApp()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        readout = app.query_one("#fixed", Readout)
        passes = LayoutPasses(app.screen)

        readout.update(Text("turn    1,234 in / 56 out\n        1 request(s)"))
        await pilot.pause()
        assert passes.count == 0
        assert shown_text(readout) == ["turn    1,234 in / 56 out", "        1 request(s)"]

        readout.update(Text("turn    1,234 in / 56 out\n        2 request(s)\nsession 9"))
        await pilot.pause()
        assert passes.count > 0
        assert readout.size.height == 3
        assert shown_text(readout)[-1] == "session 9"  # the new line is not clipped

        long = "a line long enough to wrap in a sixty column terminal, twice over at least"
        before = passes.count
        readout.update(Text(long))
        await pilot.pause()
        assert passes.count > before  # one line of text, but it wraps: a new height
        assert " ".join(shown_text(readout)).split() == long.split()

        auto = app.query_one("#auto", Readout)
        before = passes.count
        auto.update("a longer status")
        await pilot.pause()
        assert passes.count > before  # its width follows its words
        assert shown_text(auto) == ["a longer status"]


def gated_answer(text: str, gate: asyncio.Event) -> Any:
    """Streams `text`, then holds the answer open until `gate` is set."""

    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for line in text.splitlines(keepends=True):
            yield line
        await gate.wait()

    return fn


ANSWER = "## Plan\n\nMonday: **inbox**.\n\n- review the report\n- call the bank\n\nThat is all."


async def test_an_answer_ends_in_the_lines_it_streamed_without_a_layout(tmp_path: Path) -> None:
    gate = asyncio.Event()
    app = make_app(gated_answer(ANSWER, gate), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        app.chat.prompt.text = "plan my week"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.query(AssistantMessage), "the answer to start")
        answer = app.query_one(AssistantMessage)
        await wait_until(
            pilot, lambda: "That is all." in "\n".join(shown_text(answer)), "the whole answer"
        )
        await pilot.pause()
        streamed = shown_text(answer)
        passes = LayoutPasses(app.screen)

        gate.set()
        await settle(pilot, app)

        assert answer.is_settled
        assert shown_text(answer) == streamed  # nothing moves when the answer ends
        # The only layout is the activity line's leaving with the turn (without it: 0).
        assert not app.chat.activity_line.display
        assert passes.count <= 2
