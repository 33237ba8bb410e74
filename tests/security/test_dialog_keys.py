"""Approving on purpose: one `y` after the dialog is armed approves; `a` (every call for the
rest of the session) needs a second `a`, and any other key after the first goes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from co_tui.tui.screens.approval import ApprovalScreen
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.tui.helpers import SIZE, approval_dialog, make_app, settle, shell_then_text


@pytest.mark.slow
async def test_one_y_after_arming_approves(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch made.txt"], final="ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.prompt.text = "make it"
        await pilot.press("enter")
        await approval_dialog(pilot, app)
        await pilot.press("y")
        await settle(pilot, app)
        assert (tmp_path / "made.txt").exists()
        assert app.query_one(ToolCallBlock).status == "ok"
        assert not app.session.deps.auto_confirm


@pytest.mark.slow
async def test_a_once_does_not_approve(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch made.txt"], final="ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.prompt.text = "make it"
        await pilot.press("enter")
        screen = await approval_dialog(pilot, app)
        await pilot.press("a")
        await pilot.pause()
        assert app.screen is screen and screen.confirming_all
        assert not app.session.deps.auto_confirm
        await pilot.press("y")  # any other key goes back, and decides nothing
        await pilot.pause()
        assert app.screen is screen and not screen.confirming_all
        assert not (tmp_path / "made.txt").exists()
        await pilot.press("escape")
        await settle(pilot, app)
        assert not (tmp_path / "made.txt").exists()
        assert not app.session.deps.auto_confirm


@pytest.mark.slow
async def test_a_twice_approves_all(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch one.txt", "touch two.txt"], final="ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.prompt.text = "make them"
        await pilot.press("enter")
        await approval_dialog(pilot, app)
        await pilot.press("a", "a")
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert (tmp_path / "one.txt").exists() and (tmp_path / "two.txt").exists()
        assert app.session.deps.auto_confirm and app.chat.status_bar.status.approve_all
