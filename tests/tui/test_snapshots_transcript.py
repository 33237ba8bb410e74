"""Snapshots of the transcript: a prompt shown as typed, a folded paste, an answer's Markdown
on a wide terminal, code blocks labelled with their /copy numbers, and /find. Update with
`pytest tests/tui/test_snapshots_transcript.py --snapshot-update` and look at every SVG in
snapshots/test_snapshots_transcript/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from co_tui.tui.widgets.transcript import restored_items
from tests.tui.helpers import make_app, submit_for_snapshot, text_stream, wait_until
from tests.tui.test_transcript_pilot import CODE_PROMPT, MARKDOWN_ANSWER, long_conversation

SIZE = (110, 34)
WIDE = (200, 60)
SMALL = (80, 24)
THREE_BLOCKS = (
    "Install it, set it up, then check:\n\n"
    "```bash\npip install co-tui\n```\n\n"
    "```python\nfrom co_tui import app\n```\n\n"
    "```\nco-tui --version\n```\n"
)


def test_a_code_prompt_as_typed(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("Doubles its argument."), tmp_path)

    async def run_before(pilot: Any) -> None:
        await submit_for_snapshot(
            pilot, CODE_PROMPT + "\n\tindented with a tab\n[bold]not markup[/bold]"
        )

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.slow
def test_a_folded_paste(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("That is a long log."), tmp_path)
    paste = "\n".join(
        f"2024-05-0{n % 9 + 1} 12:00:{n % 60:02d} INFO request {n}" for n in range(1500)
    )

    async def run_before(pilot: Any) -> None:
        await submit_for_snapshot(pilot, paste)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_an_answer_on_a_wide_terminal(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream(MARKDOWN_ANSWER), tmp_path)

    async def run_before(pilot: Any) -> None:
        await submit_for_snapshot(pilot, "markdown please")

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_code_blocks_show_their_copy_numbers(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream(THREE_BLOCKS), tmp_path)

    async def run_before(pilot: Any) -> None:
        await submit_for_snapshot(pilot, "three blocks")

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


def test_find_shows_a_match(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        app.chat.prompt.cursor_blink = False
        assert await app.wait_ready()
        app.chat.transcript.load_items(restored_items(long_conversation(40)))
        await pilot.pause()
        app.chat.open_find("words 3")
        bar = app.chat.find_bar
        bar.field.cursor_blink = False
        await wait_until(pilot, lambda: "of" in str(bar.status.render()), "a match")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "2 of" in str(bar.status.render()), "the second match")
        await pilot.pause()
        await app.chat.transcript.layout_settled()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
