"""The key bar keeps its widgets while what it shows stays the same (a turn starting and
ending used to rebuild it twice), and still follows a change of keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets._footer import FooterKey

from co_tui.tui.app import CoApp
from co_tui.tui.widgets.keys_footer import KeysFooter
from tests.tui.helpers import SIZE, make_app, settle, text_stream, wait_until


async def key_bar(pilot: Any, app: CoApp) -> KeysFooter:
    assert await app.wait_ready()
    footer = app.chat.query_one(KeysFooter)
    await wait_until(pilot, lambda: footer.query(FooterKey), "the keys in the key bar")
    return footer


async def test_a_turn_does_not_rebuild_the_key_bar(tmp_path: Path) -> None:
    app = make_app(text_stream("answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        footer = await key_bar(pilot, app)
        keys_before = list(footer.query(FooterKey))
        app.chat.prompt.text = "hi"
        await pilot.press("enter")
        await settle(pilot, app)
        await pilot.pause()
        assert list(footer.query(FooterKey)) == keys_before  # the same widgets, not new ones
        assert [key.description for key in keys_before][:2] == ["Send", "Thinking"]


async def test_the_key_bar_follows_a_change_of_keys(tmp_path: Path) -> None:
    app = make_app(text_stream("answer"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        footer = await key_bar(pilot, app)
        assert "Send" in [key.description for key in footer.query(FooterKey)]
        app.chat.prompt.blur()  # Enter no longer sends: its key leaves the bar
        await wait_until(
            pilot,
            lambda: "Send" not in [key.description for key in footer.query(FooterKey)],
            "the key bar to drop the prompt's keys",
        )
