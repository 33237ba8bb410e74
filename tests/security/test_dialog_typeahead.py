"""Attack: keys typed right after sending a message decided the approval dialog that opened
under the user's fingers (typing "ok thanks" while the model called `rm` turned on
approve-all with its `a`). Now the dialog is not armed yet: what was typed goes to the
prompt, and nothing is decided until the user presses a key on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest

from co_tui.tui.screens import armed
from co_tui.tui.screens.approval import ApprovalScreen
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.tui.helpers import SIZE, approval_dialog, make_app, settle, shell_then_text, wait_until


@pytest.fixture(autouse=True)
def long_arming(monkeypatch: pytest.MonkeyPatch) -> None:
    """What keys do before the dialog arms is under test: on a loaded machine the harness
    can pause longer than the 0.6 s delay between two keys, so the delay is made longer."""
    monkeypatch.setattr(armed, "ARM_DELAY_S", 3.0)


@pytest.mark.slow
async def test_typing_ahead_decides_nothing_and_lands_in_the_prompt(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious data\n")
    app = make_app(shell_then_text(["rm victim.txt"], final="ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        app.chat.prompt.text = "tidy up the folder"
        # Enter, then straight on typing: the first keys may reach the prompt before the
        # dialog opens, the rest (with an `a` and a `y`) reach the dialog before it is armed.
        await pilot.press("enter", "o", "k", "space", "t", "h")
        screen = await approval_dialog(pilot, app, armed=False)
        await pilot.press("a", "n", "k", "s", "space", "y", "e", "s")
        assert not screen.armed, "the keys arrived within the arming delay"
        await pilot.pause()

        assert app.screen is screen and not screen.confirming_all
        assert victim.read_text() == "precious data\n"
        assert not app.session.deps.auto_confirm and not app.chat.status_bar.status.approve_all
        assert app.chat.prompt.text == "ok thanks yes"

        await wait_until(pilot, lambda: screen.armed, "the dialog to arm")
        await pilot.press("n")
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert victim.read_text() == "precious data\n"
        assert app.query_one(ToolCallBlock).status == "denied"
        assert not app.session.deps.auto_confirm
        assert app.chat.prompt.text == "ok thanks yes"  # still there, not sent


@pytest.mark.slow
async def test_enter_and_backspace_before_arming_decide_nothing(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch made.txt"], final="ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.prompt.text = "make it"
        await pilot.press("enter")
        screen = await approval_dialog(pilot, app, armed=False)
        await pilot.press("enter", "backspace", "y", "enter")
        await pilot.pause()
        assert app.screen is screen and not screen.armed
        assert not (tmp_path / "made.txt").exists()
        assert app.chat.prompt.text == "y"
        await wait_until(pilot, lambda: screen.armed, "the dialog to arm")
        await pilot.press("n")
        await settle(pilot, app)
        assert not (tmp_path / "made.txt").exists()
