"""Start and exit as a user meets them: Ctrl+D and Ctrl+C around a draft, the welcome."""

from __future__ import annotations

from pathlib import Path

from co_tui.tui.widgets.prompt import PromptInput
from tests.tui.helpers import SIZE, make_app, text_stream


async def test_ctrl_d_with_a_draft_deletes_forward_and_does_not_quit(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await pilot.press(*"draft", "home")
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert app.is_running
        assert prompt.text == "raft"
        prompt.clear()
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_on_a_draft_clears_it_but_up_brings_it_back(tmp_path: Path) -> None:
    app = make_app(text_stream("x"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await pilot.press(*"a long draft")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert prompt.text == ""
        assert app.is_running
        assert any("Up brings it back" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+c")  # the empty prompt: arms exit, as before
        await pilot.pause()
        assert app.is_running
        await pilot.press("up")
        assert prompt.text == "a long draft"
        await pilot.press("ctrl+c", "ctrl+c")  # a draft again: the second press does not exit
        await pilot.pause()
        assert app.is_running
