"""The transcript as a user reads it: prompts shown as typed, long pastes folded, answers'
Markdown, keyboard scrolling, and /find."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget

from co_tui.protocol import events as ev
from co_tui.tui.widgets.transcript import item_text, restored_items
from co_tui.tui.widgets.user_message import UserMessage
from tests.tui.helpers import SIZE, make_app, rendered, settle, text_stream, wait_until

CODE_PROMPT = "def f(x):\n    return x * 2\n# a heading?\nthe end"
SID = "11111111-2222-3333-4444-555555555555"


async def send(pilot: Any, text: str) -> None:
    app = pilot.app
    assert await app.wait_ready()
    app.chat.prompt.text = text
    await pilot.press("enter")
    await settle(pilot, app)


def user_messages(app: Any) -> list[UserMessage]:
    return list(app.query(UserMessage))


async def test_a_prompt_is_shown_as_typed(tmp_path: Path) -> None:
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, CODE_PROMPT)
        shown = rendered(user_messages(app)[0]).splitlines()
        lines = [line.strip("▎▌▊ │") for line in shown]  # the message's left bar and padding
        start = shown[0].index("def f(x):")
        assert shown[1][start:].rstrip() == "    return x * 2"  # its indentation kept
        assert any("# a heading?" in line for line in shown)  # not a heading: the `#` shows
        assert len([line for line in lines if line.strip()]) == 4  # line breaks kept


async def test_markup_and_escapes_in_a_prompt_show_as_text(tmp_path: Path) -> None:
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "[bold]not bold[/bold] **stars** \x1b[2K")
        shown = rendered(user_messages(app)[0])
        assert "[bold]not bold[/bold] **stars**" in shown
        assert "\\x1b[2K" in shown or "\\e[2K" in shown or "␛" in shown


async def test_a_shell_command_echo_is_plain(tmp_path: Path) -> None:
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "!echo hi")
        assert "!echo hi" in rendered(user_messages(app)[0])
        assert "`" not in rendered(user_messages(app)[0])


@pytest.mark.slow
async def test_a_long_paste_is_folded_and_unfolds(tmp_path: Path) -> None:
    paste = "\n".join(f"line {n} of the paste" for n in range(1, 1501))
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, paste)
        message = user_messages(app)[0]
        shown = rendered(message)
        assert "[pasted 1,500 lines, 33 KB] · click to expand" in shown
        assert "line 1 of the paste" in shown
        assert "line 100 of the paste" not in shown
        assert message.size.height < 10
        await pilot.click(message)
        await wait_until(pilot, lambda: message.size.height > 1500, "the paste to unfold")
        assert message.expanded
        app.chat.transcript.scroll_home(animate=False)
        await pilot.pause()
        await pilot.click(message, offset=(2, 0))
        await wait_until(pilot, lambda: message.size.height < 10, "the paste to fold again")
        # The keyboard: the folded paste takes focus; Enter unfolds it.
        message.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: message.expanded, "Enter to unfold the paste")


async def test_a_short_message_is_not_folded(tmp_path: Path) -> None:
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "\n".join(f"line {n}" for n in range(1, 20)))
        shown = rendered(user_messages(app)[0])
        assert "pasted" not in shown
        assert "line 19" in shown


async def test_a_restored_prompt_is_shown_as_typed(tmp_path: Path) -> None:
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        events = [ev.TurnStart(session_id=SID, prompt=CODE_PROMPT, replayed=True)]
        app.chat.transcript.load_items(restored_items(events))
        await pilot.pause()
        shown = rendered(user_messages(app)[0])
        assert "    return x * 2" in shown
        assert "# a heading?" in shown


MARKDOWN_ANSWER = (
    "> a quoted line\n\n"
    "1. first\n2. second\n\n"
    "See [the docs](https://example.com/docs) and [https://x.org](https://x.org).\n\n"
    "| Name | Description | Notes |\n|---|---|---|\n"
    "| alpha | "
    + "a long description that keeps going " * 8
    + "to its last-word | "
    + "notes that run on " * 6
    + "to the-end |\n"
    "| beta | short | x |\n\n" + "A paragraph of prose that runs on and on. " * 10
)


async def test_an_answer_reads_well(tmp_path: Path) -> None:
    from co_tui.tui.widgets.assistant_message import AssistantMessage
    from tests.tui.helpers import on_screen

    app = make_app(text_stream(MARKDOWN_ANSWER), tmp_path)
    async with app.run_test(size=(200, 60)) as pilot:
        await send(pilot, "markdown please")
        answer = app.query_one(AssistantMessage)
        shown = rendered(answer)
        lines = shown.splitlines()
        assert any(line.startswith("▎ a quoted line") for line in lines)
        quote = next(s for s in on_screen(answer) if "a quoted line" in s.text)
        colours = {seg.style.color.name for seg in quote if seg.style and seg.style.color}
        assert "magenta" not in colours  # a quote is not an error
        assert any(line.lstrip().startswith("1. first") for line in lines)
        assert any(line.lstrip().startswith("2. second") for line in lines)
        assert "the docs (https://example.com/docs)" in shown
        assert "(https://x.org)" not in shown  # the address is the text: shown once
        assert "last-word" in shown and "the-end" in shown  # wide table cells wrap, not cut
        assert "…" not in shown
        assert answer.size.width <= 110  # readable prose on a wide terminal
        assert max(len(line.rstrip()) for line in lines) <= 110


def long_conversation(turns: int) -> list[ev.TurnEvent]:
    events: list[ev.TurnEvent] = []
    for n in range(turns):
        events.append(ev.TurnStart(session_id=SID, prompt=f"question {n}", replayed=True))
        events.append(ev.TextEnd(session_id=SID, content=f"answer {n}\n\nmore words {n}"))
    return events


async def restored(pilot: Any, turns: int) -> Any:
    app = pilot.app
    assert await app.wait_ready()
    app.chat.transcript.load_items(restored_items(long_conversation(turns)))
    await pilot.pause()
    await app.chat.transcript.layout_settled()
    return app.chat.transcript


async def test_keys_scroll_the_transcript_while_the_prompt_has_focus(tmp_path: Path) -> None:
    from co_tui.tui.widgets.items import Note

    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await restored(pilot, 100)
        assert app.chat.prompt.has_focus
        bottom = transcript.scroll_y
        assert bottom == transcript.max_scroll_y > 0
        await pilot.press("pageup")
        await wait_until(pilot, lambda: transcript.scroll_y < bottom - 5, "PageUp to scroll")
        paged = transcript.scroll_y
        await pilot.press("shift+up")
        await wait_until(pilot, lambda: transcript.scroll_y == paged - 1, "Shift+Up: a line")
        await pilot.press("shift+down")
        await wait_until(pilot, lambda: transcript.scroll_y == paged, "Shift+Down: a line")
        # Scrolled up, new output does not pull the view down.
        transcript.add(Note("new output"))
        await pilot.pause()
        await transcript.layout_settled()
        assert transcript.scroll_y == paged
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: transcript.scroll_y > paged, "PageDown to scroll")
        # The top brings back what was archived; a second press the batch before it.
        archived = len(transcript._archived)
        assert archived > 0
        await pilot.press("ctrl+home")
        await wait_until(pilot, lambda: len(transcript._archived) < archived, "earlier items")
        await pilot.pause()
        assert "question" in rendered(transcript)
        # Ctrl+End: the end, and new output is followed again.
        await pilot.press("ctrl+end")
        await wait_until(
            pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, "Ctrl+End: the end"
        )
        transcript.add(Note("latest output"))
        await pilot.pause()
        await transcript.layout_settled()
        await wait_until(pilot, lambda: "latest output" in rendered(transcript), "following")


async def test_shift_arrows_select_in_a_prompt_of_several_lines(tmp_path: Path) -> None:
    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await restored(pilot, 30)
        app.chat.prompt.text = "first line\nsecond line"
        app.chat.prompt.move_cursor((1, 3))
        await pilot.pause()
        await transcript.layout_settled()  # the taller prompt made the transcript shorter
        before = transcript.scroll_y
        await pilot.press("shift+up")
        await pilot.pause()
        assert transcript.scroll_y == before
        assert app.chat.prompt.selected_text  # the arrow selected instead


def found(app: Any) -> list[Any]:
    return list(app.chat.transcript.query(".-found"))


@pytest.mark.slow
async def test_ctrl_f_finds_text_in_archived_items_too(tmp_path: Path) -> None:
    from co_tui.tui.widgets.find_bar import FindBar

    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await restored(pilot, 100)  # 200 items: most of them archived
        archived = len(transcript._archived)
        bar = app.chat.query_one(FindBar)
        assert not bar.display
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: bar.display and bar.field.has_focus, "the find bar")
        # Case-insensitive: answers 7 and 70 to 79 match.
        await pilot.press(*["space" if c == " " else c for c in "MORE WORDS 7"])
        await wait_until(pilot, lambda: "1 of 11" in str(bar.status.render()), "1 of 11")
        assert "more words 79" in rendered(found(app)[0])  # the newest first
        await pilot.press("enter")
        await wait_until(pilot, lambda: "2 of 11" in str(bar.status.render()), "2 of 11")
        assert "more words 78" in rendered(found(app)[0])
        await pilot.press("shift+f3")
        await wait_until(pilot, lambda: "1 of 11" in str(bar.status.render()), "back to 1")
        for _ in range(10):
            await pilot.press("f3")
        await wait_until(pilot, lambda: "11 of 11" in str(bar.status.render()), "the oldest")
        item = found(app)[0]
        assert item.plain_text.endswith("more words 7") and len(transcript._archived) < archived
        await pilot.pause()
        await transcript.layout_settled()
        assert item.region.y >= transcript.region.y  # scrolled to it: it is on screen
        assert item.region.y < transcript.region.bottom
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.chat.prompt.has_focus, "Esc: back to the prompt")
        assert not bar.display and not found(app)


async def test_find_says_when_nothing_matches(tmp_path: Path) -> None:
    from co_tui.tui.widgets.find_bar import FindBar

    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await restored(pilot, 5)
        app.chat.prompt.text = "/find no such words"
        await pilot.press("enter")
        bar = app.chat.query_one(FindBar)
        await wait_until(pilot, lambda: "no match" in str(bar.status.render()), "no match")
        assert bar.field.value == "no such words" and not found(app)
        bar.field.value = "question 3"
        await wait_until(pilot, lambda: "1 of 1" in str(bar.status.render()), "a match")
        assert "question 3" in rendered(found(app)[0])


def holds_a_widget(obj: object, depth: int = 3) -> bool:
    if isinstance(obj, Widget):
        return True
    return depth > 0 and any(holds_a_widget(r, depth - 1) for r in gc.get_referents(obj))


@pytest.mark.slow
async def test_a_very_long_answer_is_archived_once_followed_and_freed(tmp_path: Path) -> None:
    """Mounted lines are bounded: an answer of thousands of lines leaves the DOM (and
    memory) once something follows it, and comes back when scrolled to."""
    from co_tui.tui.widgets.items import Note, markdown_item
    from co_tui.tui.widgets.transcript import MAX_LINES

    app = make_app(text_stream("ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        transcript = await restored(pilot, 2)
        long_answer = "\n\n".join(f"paragraph {n}" for n in range(MAX_LINES // 2 + 100))
        widget = transcript.add(markdown_item(long_answer))
        await pilot.pause()
        await transcript.layout_settled()
        assert widget.outer_size.height > MAX_LINES
        assert not transcript._archived  # the newest item stays, however long
        transcript.add(Note("what came next"))
        await pilot.pause()
        assert widget in transcript.items  # what follows does not fill the view yet
        transcript.add(markdown_item("\n\n".join(f"later {n}" for n in range(SIZE[1]))))
        await pilot.pause()
        await transcript.layout_settled()
        transcript.add(Note("and then"))
        await wait_until(pilot, lambda: widget not in transcript.items, "the answer archived")
        assert transcript.scroll_y > 0  # the view is not at the top: nothing comes back
        # The archive keeps how to build each item again, never the widget and its lines.
        assert transcript._archived
        assert not any(holds_a_widget(item.build) for item in transcript._archived)
        await pilot.press("ctrl+home")
        await wait_until(pilot, lambda: not transcript._archived, "the archive brought back")
        assert any(item_text(w).startswith("paragraph 0\n") for w in transcript.items)
