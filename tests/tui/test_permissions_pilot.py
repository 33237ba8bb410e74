""" "Always allow this in this project" in the real app: `p` opens the rule field, the user
edits the rule and saves it with Enter; the next turn runs the same kind of command without
asking; `/permissions` lists the rule and removes it, after which the dialog asks again."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall
from rich.console import Console

from co_tui.config.settings import Permissions, Settings
from co_tui.permissions.store import ProjectRuleStore
from co_tui.tui.screens.approval import ApprovalScreen
from co_tui.tui.widgets.items import Note, RenderedItem
from tests.helpers import user_prompts
from tests.tui.helpers import (
    StreamFn,
    approval_dialog,
    last_tool_returns,
    make_app,
    rendered,
    settle,
    shell_then_text,
    wait_until,
)

SMALL = (80, 24)


def one_command_per_turn(*commands: str) -> StreamFn:
    """Turn n calls run_shell_command with commands[n-1], then answers with what it got."""

    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        returns = last_tool_returns(messages)
        turn = len(user_prompts(messages))
        if not returns:
            args = json.dumps({"cmd": commands[turn - 1]})
            yield {
                0: DeltaToolCall(name="run_shell_command", json_args=args, tool_call_id=f"t{turn}")
            }
            return
        yield "; ".join(f"{r.tool_name}: {r.content}" for r in returns)

    return fn


def notes(app: Any) -> list[str]:
    return [str(w._source) for w in app.chat.transcript.items if isinstance(w, Note)]


def command_outputs(app: Any) -> list[str]:
    texts = []
    for item in app.chat.transcript.items:
        if isinstance(item, RenderedItem) and "command-output" in item._item_classes:
            console = Console(file=io.StringIO(), width=100, color_system=None)
            console.print(item._source)
            texts.append(console.file.getvalue())  # type: ignore[attr-defined]
    return texts


async def submit(pilot: Any, app: Any, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")


async def open_rule_field(pilot: Any, app: Any) -> ApprovalScreen:
    screen = await approval_dialog(pilot, app)
    await pilot.press("p")
    await wait_until(pilot, lambda: screen.editing_rule, "the rule field to open")
    await pilot.pause()
    return screen


@pytest.mark.slow
async def test_always_allow_then_permissions_lists_and_removes_the_rule(tmp_path: Path) -> None:
    app = make_app(one_command_per_turn("echo one", "echo two", "echo three"), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "first")
        screen = await open_rule_field(pilot, app)
        field = screen.rule_input
        assert field.value == "shell(echo one)" and field.has_focus
        assert "exactly the command `echo one`" in rendered(screen.rule_status)
        await pilot.press("backspace", "backspace", "backspace", "backspace", "*", ")")
        assert field.value == "shell(echo *)"
        await pilot.pause()
        assert "`echo` with any further words" in rendered(screen.rule_status)
        await pilot.press("enter")
        await settle(pilot, app)
        assert "run_shell_command: one" in app.session.last_answer
        saved = "saved the permission rule `shell(echo *)` for this project"
        assert any(
            n.startswith("✓ you always allow run_shell_command echo one") for n in notes(app)
        )
        assert any(saved in n for n in notes(app))
        assert ProjectRuleStore(tmp_path).load().texts == ("shell(echo *)",)

        # The next turn: the same kind of command runs without asking.
        await submit(pilot, app, "second")
        await settle(pilot, app)
        assert "run_shell_command: two" in app.session.last_answer
        allowed = "allowed by your permission rule `shell(echo *)` (saved for this project)"
        assert any(n.startswith("· auto-approved run_shell_command echo two") for n in notes(app))
        assert any(allowed in n for n in notes(app))

        await submit(pilot, app, "/permissions")
        await wait_until(pilot, lambda: command_outputs(app), "the /permissions table")
        [table] = command_outputs(app)
        assert "Permission rules (1)" in table
        row = next(line for line in table.splitlines() if "shell(echo *)" in line)
        assert row.split() == ["1", "shell(echo", "*)", "allow", "saved", "for", "this", "project"]

        await submit(pilot, app, "/permissions remove 1")
        await wait_until(pilot, lambda: len(command_outputs(app)) == 2, "the removal")
        assert "Removed the saved rule `shell(echo *)`" in command_outputs(app)[1]
        assert ProjectRuleStore(tmp_path).load().texts == ()

        # Asks again.
        await submit(pilot, app, "third")
        screen = await approval_dialog(pilot, app)
        assert screen.request.args == {"cmd": "echo three"}
        await pilot.press("n")
        await settle(pilot, app)


async def test_permissions_shows_settings_rules_and_keeps_them(tmp_path: Path) -> None:
    permissions = Permissions(deny=["shell(rm *)"], allow=["web_search"])
    settings = Settings(theme="textual-dark", permissions=permissions)
    app = make_app(shell_then_text(["ls"]), tmp_path, settings=settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, app, "/permissions")
        await wait_until(pilot, lambda: command_outputs(app), "the /permissions table")
        table = command_outputs(app)[0]
        rows = [line.split() for line in table.splitlines() if "settings.json" in line]
        assert rows == [
            ["1", "shell(rm", "*)", "deny", "settings.json"],
            ["2", "web_search", "allow", "settings.json"],
        ]
        await submit(pilot, app, "/permissions remove 1")
        await wait_until(pilot, lambda: len(command_outputs(app)) == 2, "the answer")
        assert "comes from settings.json" in command_outputs(app)[1]


@pytest.mark.slow
async def test_esc_in_the_field_goes_back_and_decides_nothing(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch made.txt"]), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "make it")
        screen = await open_rule_field(pilot, app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and not screen.editing_rule
        assert not screen.rule_box.display and screen.focused is screen.args_view
        assert "always allow in this project" in rendered(screen.keys)
        await pilot.press("n")
        await settle(pilot, app)
        assert not (tmp_path / "made.txt").exists()
        assert ProjectRuleStore(tmp_path).load().texts == ()


@pytest.mark.slow
async def test_a_rule_that_does_not_cover_the_call_is_not_accepted(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch made.txt"]), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "make it")
        screen = await open_rule_field(pilot, app)
        screen.rule_input.value = "shell(rm *)"
        await pilot.pause()
        assert "does not cover the call" in rendered(screen.rule_status)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and screen.editing_rule
        screen.rule_input.value = "shell(npm test*)"
        await pilot.pause()
        assert "word of its own" in rendered(screen.rule_status)
        await pilot.press("escape", "n")
        await settle(pilot, app)
        assert not (tmp_path / "made.txt").exists()
        assert ProjectRuleStore(tmp_path).load().texts == ()


@pytest.mark.slow
async def test_ctrl_c_in_the_field_cancels_the_turn(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch made.txt"]), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "make it")
        await open_rule_field(pilot, app)
        await pilot.press("ctrl+c")
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert not (tmp_path / "made.txt").exists()
        assert any("interrupted" in n for n in notes(app))


async def test_no_offer_for_a_multi_line_command(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["echo one\necho two"]), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "run it")
        screen = await approval_dialog(pilot, app)
        assert screen.request.suggested_rule is None
        assert "always allow" not in rendered(screen.keys)
        await pilot.press("p")
        await pilot.pause()
        assert not screen.editing_rule
        await pilot.press("n")
        await settle(pilot, app)


@pytest.mark.slow
def test_the_rule_field_open(snap_compare: Any, tmp_path: Path) -> None:
    """80x24: the dialog with the rule field open, edited to a prefix rule."""
    app = make_app(shell_then_text(["npm test"]), tmp_path)

    async def run_before(pilot: Any) -> None:
        pilot.app.chat.prompt.cursor_blink = False
        await submit(pilot, pilot.app, "Run the tests.")
        screen = await approval_dialog(pilot, pilot.app)
        screen.rule_input.cursor_blink = False
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.editing_rule, "the rule field to open")
        await pilot.press("backspace", "space", "*", ")")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
