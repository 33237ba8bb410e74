"""Ctrl+R searches the prompts sent before, as in a shell: type to filter, Enter puts the
match in the prompt, Esc leaves the prompt as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from co_tui.tui.widgets.history_search import matches
from co_tui.tui.widgets.prompt import PromptHistory
from tests.tui.helpers import SIZE, make_app, rendered, text_stream

SENT = [
    "run the tests in tests/tui",
    "explain the egress guard",
    "Run the TESTS again but only the slow ones",
    "what is in docs/usage.md",
    "explain the egress guard",
]


def app_with_history(tmp_path: Path) -> Any:
    path = tmp_path / "history"
    history = PromptHistory(path)
    for text in SENT:
        history.add(text)
    return make_app(text_stream("ok"), tmp_path, history_path=path)


async def type_text(pilot: Any, text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


def test_every_word_must_match_in_any_case_newest_first_once() -> None:
    assert matches(SENT, "tests RUN") == [SENT[2], SENT[0]]
    assert matches(SENT, "") == [SENT[4], SENT[3], SENT[2], SENT[0]]
    assert matches(SENT, "nothing like it") == []


async def test_type_to_filter_and_enter_puts_it_in_the_prompt(tmp_path: Path) -> None:
    app = app_with_history(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = app.chat
        await pilot.press("ctrl+r")
        search = chat.history_search
        assert search.is_open and search.field.has_focus
        assert "explain the egress guard" in rendered(search)  # the newest first
        await type_text(pilot, "tests run")
        shown = rendered(search)
        assert "only the slow ones" in shown and "in tests/tui" in shown
        assert "egress" not in shown
        assert "2 of 4" in str(search.border_title)
        await pilot.press("down")  # the older match
        await pilot.press("enter")
        assert not search.is_open
        assert chat.prompt.text == "run the tests in tests/tui"
        assert chat.prompt.has_focus
        assert chat.prompt.cursor_location == chat.prompt.document.end


async def test_ctrl_r_again_goes_to_older_matches(tmp_path: Path) -> None:
    app = app_with_history(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+r")
        await type_text(pilot, "the")
        await pilot.press("ctrl+r", "ctrl+r", "enter")  # the third match: egress, slow, tui
        assert app.chat.prompt.text == SENT[0]


async def test_escape_leaves_the_prompt_as_it_was(tmp_path: Path) -> None:
    app = app_with_history(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "my draft")
        await pilot.press("ctrl+r")
        await type_text(pilot, "egress")
        await pilot.press("escape")
        assert not app.chat.history_search.is_open
        assert app.chat.prompt.text == "my draft" and app.chat.prompt.has_focus


async def test_no_match_says_so_and_enter_changes_nothing(tmp_path: Path) -> None:
    app = app_with_history(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "keep me")
        await pilot.press("ctrl+r")
        await type_text(pilot, "zzz")
        assert "no match" in str(app.chat.history_search.border_title)
        await pilot.press("enter")
        assert app.chat.prompt.text == "keep me"


async def test_hidden_characters_in_a_prompt_show_as_escapes(tmp_path: Path) -> None:
    path = tmp_path / "history"
    PromptHistory(path).add("innocent\x1b]52;c;cHduZWQ=\x07 text\nsecond line")
    app = make_app(text_stream("ok"), tmp_path, history_path=path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+r")
        shown = rendered(app.chat.history_search)
        assert "\x1b" not in shown and "\\x1b]52" in shown
        assert "innocent" in shown and "⏎" in shown  # one line a prompt


async def test_a_long_prompt_takes_one_line(tmp_path: Path) -> None:
    path = tmp_path / "history"
    PromptHistory(path).add(" ".join(f"word{n}" for n in range(200)))
    app = make_app(text_stream("ok"), tmp_path, history_path=path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+r")
        assert app.chat.history_search.list.virtual_size.height == 1
        assert "…" in rendered(app.chat.history_search)
