"""A streamed answer's lines (co_tui/tui/widgets/lines.py, co_tui/tui/render/streaming.py): what is
painted is always what the widget holds, however its lines are kept between frames; a long
run of finished text is committed in pieces cut at block boundaries, with the event loop
served between them, and painted once."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.strip import Strip

from co_tui.tui.render.markdown import TranscriptMarkdown
from co_tui.tui.render.streaming import (
    FLUSH_INTERVAL,
    MAX_FLUSH_INTERVAL,
    MAX_LIVE_CHARS,
    RENDER_SHARE,
    flush_interval,
    split_blocks,
    split_finished,
)
from co_tui.tui.widgets.assistant_message import AssistantMessage
from co_tui.tui.widgets.lines import PAINTED_LINES, RenderedLines
from tests.tui.test_relayout_pilot import LayoutPasses, shown_text

FENCE_WITH_BLANKS = "```python\ndef f():\n\n    return 1\n\n```\n"


def test_pieces_are_the_text_cut_at_block_boundaries() -> None:
    text = ("A paragraph of some length.\n\n" * 10) + FENCE_WITH_BLANKS + "\n" + "- item\n\n" * 5
    pieces = split_blocks(text, size=60)
    assert "".join(pieces) == text
    assert len(pieces) > 3
    for piece in pieces[:-1]:
        assert len(piece) >= 60
        assert piece.endswith(("\n\n", "```\n"))
    # The fence, blank lines and all, is inside one piece.
    assert sum(FENCE_WITH_BLANKS in piece for piece in pieces) == 1


def test_a_fence_is_only_closed_by_its_own_kind() -> None:
    text = "~~~~\n```\n\nnot closed by backticks\n~~~\n\nnor a shorter marker\n~~~~\n\nafter\n\n"
    pieces = split_blocks(text, size=1)
    assert pieces[0] == text[: text.index("~~~~\n\n") + len("~~~~\n")]
    assert "".join(pieces) == text


def test_short_text_is_one_piece() -> None:
    assert split_blocks("one\n\ntwo\n\n", size=600) == ["one\n\ntwo\n\n"]
    assert split_blocks("", size=600) == []


def test_the_finished_text_ends_at_the_last_block_boundary() -> None:
    assert split_finished("one\n\ntwo\n\nthree, still") == ("one\n\ntwo\n\n", "", "three, still")
    assert split_finished("one\n\n   ") == ("one\n\n", "", "   ")  # an incomplete line
    assert split_finished(FENCE_WITH_BLANKS + "next") == (FENCE_WITH_BLANKS, "", "next")
    open_fence = "intro\n\n```\ncode\n\nmore code\n"
    assert split_finished(open_fence) == ("intro\n\n", "", "```\ncode\n\nmore code\n")


def test_a_block_longer_than_the_live_limit_is_cut_at_a_line() -> None:
    code = "x = 1\n" * (MAX_LIVE_CHARS // 6 + 10)
    finished, reopen, rest = split_finished("~~~~python\n" + code + "x = 2")
    assert finished == "~~~~python\n" + code + "~~~~\n"  # closed with its own marker
    assert (reopen, rest) == ("~~~~python\n", "x = 2")
    paragraph = "a line of a long paragraph\n" * (MAX_LIVE_CHARS // 27 + 10)
    assert split_finished(paragraph + "end") == (paragraph, "", "end")
    # An open fence with nothing after its opening line is not cut, nor a short open block.
    no_body = "x" * MAX_LIVE_CHARS + "\n```\n"
    assert split_finished(no_body) == ("", "", no_body)
    assert split_finished("```\nshort\n") == ("", "", "```\nshort\n")


def test_updates_come_less_often_only_when_rendering_them_is_slow() -> None:
    """A stream at reading pace is shown ten times a second; one whose updates take longer to
    render than a tenth of that is shown less often, never less than four times a second."""
    assert flush_interval(0.0) == flush_interval(0.002) == FLUSH_INTERVAL == 0.1
    assert flush_interval(0.015) == pytest.approx(0.015 / RENDER_SHARE)  # 0.15 s
    assert flush_interval(0.5) == MAX_FLUSH_INTERVAL == 0.25


class LinesApp(App[None]):
    CSS = "RenderedLines { background: $panel; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield RenderedLines()


async def test_what_is_painted_follows_every_change() -> None:
    app = LinesApp()
    async with app.run_test(size=(30, 10)) as pilot:
        lines = app.query_one(RenderedLines)
        lines.add(Text("first block"))
        lines.set_tail(Text("tail one"))
        await pilot.pause()
        assert shown_text(lines) == ["first block", "tail one"]

        lines.set_tail(Text("tail two"))  # the same height: only the tail is painted again
        await pilot.pause()
        assert shown_text(lines) == ["first block", "tail two"]

        lines.add(Text("second block"))  # the tail moves down a line
        await pilot.pause()
        assert shown_text(lines) == ["first block", "second block", "tail two"]

        lines.add(Text("tail two, finished"), replacing_tail=True)
        lines.set_tail(Text("new tail"))
        await pilot.pause()
        shown = ["first block", "second block", "tail two, finished", "new tail"]
        assert shown_text(lines) == shown


async def test_lines_are_painted_again_in_a_new_style_and_width() -> None:
    app = LinesApp()
    async with app.run_test(size=(30, 10)) as pilot:
        app.theme = "textual-dark"
        lines = app.query_one(RenderedLines)
        lines.add(Text("a block long enough to wrap at thirty cells"))
        await pilot.pause()
        before = lines.render_line(0)
        assert shown_text(lines) == ["a block long enough to wrap at", "thirty cells"]

        app.theme = "textual-light"
        await pilot.pause()
        after = lines.render_line(0)
        assert after.text == before.text
        assert [s.style for s in after] != [s.style for s in before]  # the new background

        await pilot.resize_terminal(20, 10)
        await pilot.pause()
        assert shown_text(lines) == ["a block long enough", "to wrap at thirty", "cells"]


def live_strips() -> int:
    gc.collect()
    return sum(1 for thing in gc.get_objects() if isinstance(thing, Strip))


async def test_painting_every_line_of_a_long_answer_keeps_no_copy_of_each() -> None:
    """Scrolling through a long answer paints each of its lines: what is kept painted is
    bounded (a few screens), not a copy of every line painted since it was added."""
    app = LinesApp()
    async with app.run_test(size=(40, 10)) as pilot:
        lines = app.query_one(RenderedLines)
        lines.add(Text("\n".join(f"line {n}" for n in range(3 * PAINTED_LINES))))
        await pilot.pause()
        before = live_strips()
        for y in range(3 * PAINTED_LINES):
            assert lines.render_line(y).text.startswith(f"line {y}")
        assert live_strips() - before <= PAINTED_LINES


async def test_a_batch_is_laid_out_once_when_it_ends() -> None:
    app = LinesApp()
    async with app.run_test(size=(30, 10)) as pilot:
        lines = app.query_one(RenderedLines)
        await pilot.pause()

        async def passes_for_three_blocks(batched: bool) -> int:
            passes = LayoutPasses(app.screen)
            with contextlib.ExitStack() as stack:
                if batched:
                    stack.enter_context(lines.batch_changes())
                for n in range(3):
                    lines.add(Text(f"block {n}"))
                    await pilot.pause()  # frames pass meanwhile
                if batched:
                    assert passes.count == 0
            await pilot.pause()
            return passes.count

        one_at_a_time = await passes_for_three_blocks(batched=False)
        batched = await passes_for_three_blocks(batched=True)
        assert batched * 3 == one_at_a_time
        assert shown_text(lines) == [f"block {n}" for n in (0, 1, 2, 0, 1, 2)]


class AnswerApp(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield AssistantMessage()


async def blocks_seen_while_it_streams(
    message: AssistantMessage, answer: str, every_s: float
) -> list[int]:
    """`answer` arrives at once; another task notes the committed blocks every `every_s`
    until the message settles (failing the test after 15 s)."""
    seen: list[int] = []

    async def watch() -> None:
        while not message.is_settled:
            seen.append(message.committed_blocks)
            await asyncio.sleep(every_s)

    watcher = asyncio.create_task(watch())
    message.feed(answer)
    message.finish()
    await asyncio.wait_for(message.wait_settled(), timeout=15)
    await watcher
    return seen


async def test_a_long_answer_arriving_at_once_is_committed_piece_by_piece() -> None:
    answer = "".join(f"Paragraph {n}, with a few words in it.\n\n" for n in range(120))
    app = AnswerApp()
    async with app.run_test(size=(60, 20)) as pilot:
        message = app.query_one(AssistantMessage)
        seen = await blocks_seen_while_it_streams(message, answer, every_s=0)
        await pilot.pause()

        # Other tasks ran between the pieces: the loop was never held for the whole answer.
        assert len({n for n in seen if n > 0}) > 3
        shown = [line for line in message.text.splitlines() if line]
        assert message.text == answer
        scroll = app.query_one(VerticalScroll)
        scroll.scroll_home(animate=False)
        await pilot.pause()
        width = scroll.scrollable_content_region.width  # not its scrollbar
        visible = [line[:width].rstrip() for line in shown_text(scroll) if line[:width].strip()]
        assert len(visible) >= 5
        assert visible == shown[: len(visible)]


async def test_a_timer_that_falls_due_during_a_piece_runs_before_the_next_piece() -> None:
    """The screen's refresh and a key's handling wake on timers: a long answer arriving at
    once never renders two pieces in a row while one of them waits."""
    answer = "".join(f"Paragraph {n}, with a few words in it.\n\n" for n in range(240))
    app = AnswerApp()
    async with app.run_test(size=(60, 20)):
        message = app.query_one(AssistantMessage)
        # A task woken by a timer, as the screen's refresh is.
        seen = await blocks_seen_while_it_streams(message, answer, every_s=0.0001)
        steps = [after - before for before, after in itertools.pairwise(seen)]
        assert max(seen) > 5  # the answer was committed in pieces
        assert max(steps) == 1, f"pieces rendered with no tick between them: {steps}"


async def test_an_answer_committed_in_pieces_is_spaced_as_it_is_whole() -> None:
    """Each piece is rendered on its own, after a blank line; a piece opening with a list,
    a quote or a table is not given a second one (Rich's Markdown puts one before those)."""
    section = (
        "A paragraph before a list, long enough to matter.\n\n- one\n- two\n\n"
        "```python\nx = 1\n```\n\n1. first\n2. second\n\n> a quote\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\nA closing paragraph.\n\n"
    )
    answer = section * 6
    app = AnswerApp()
    async with app.run_test(size=(60, 200)) as pilot:
        message = app.query_one(AssistantMessage)
        await blocks_seen_while_it_streams(message, answer, every_s=0)
        await pilot.pause()
        assert message.committed_blocks > 3
        lines = app.query_one(RenderedLines)
        width = lines.content_size.width
        options = app.console.options.update_width(width)
        whole = app.console.render_lines(TranscriptMarkdown(answer), options, pad=False)
        expected = ["".join(segment.text for segment in line).rstrip() for line in whole]
        shown = shown_text(lines)
        assert shown[: len(expected)] == expected
