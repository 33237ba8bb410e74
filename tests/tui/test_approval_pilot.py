"""The approval dialog in the real app: keys, scrolling a long command, the decision lines,
approve-all scoped to one session, the sandbox warnings."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from rich.style import Style

from co_tui.config.settings import Settings
from co_tui.protocol.frontend import ApprovalDecision, ApprovalRecord, ApprovalRequest
from co_tui.tui.screens import armed
from co_tui.tui.screens.approval import ApprovalScreen
from co_tui.tui.widgets.decision import approval_line
from co_tui.tui.widgets.items import Note
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.tui.helpers import (
    approval_dialog,
    make_app,
    rendered,
    settle,
    shell_then_text,
    text_stream,
    wait_until,
)

SMALL = (80, 24)


def notes(app: Any) -> list[str]:
    return [str(w._source) for w in app.chat.transcript.items if isinstance(w, Note)]


async def submit(pilot: Any, app: Any, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")


@pytest.mark.slow
async def test_ctrl_c_in_the_dialog_cancels_the_turn(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch should-not-exist"]), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "make a file")
        await approval_dialog(pilot, app, armed=False)  # works before the dialog is armed
        await pilot.press("ctrl+c")
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert not app.turn_running and app.is_running
        assert not (tmp_path / "should-not-exist").exists()
        assert any("interrupted" in n for n in notes(app))


async def test_escape_denies_even_before_the_dialog_is_armed(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["touch should-not-exist"], final="ok"), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "make a file")
        await approval_dialog(pilot, app, armed=False)
        await pilot.press("escape")
        await settle(pilot, app)
        assert not (tmp_path / "should-not-exist").exists()
        assert app.query_one(ToolCallBlock).status == "denied"
        assert "denied" in app.session.last_answer.lower()


@pytest.mark.slow
async def test_a_long_command_scrolls_and_the_keys_stay_on_screen(tmp_path: Path) -> None:
    command = "\n".join(f"echo line-{n:03}" for n in range(200)) + "\ntouch LAST-LINE"
    app = make_app(shell_then_text([command]), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "run the script")
        screen = await approval_dialog(pilot, app)
        dialog = screen.query_one("#approval-dialog")
        keys = screen.query_one("#approval-keys")
        args = screen.args_view
        assert dialog.region.contains_region(keys.region)
        assert keys.region.bottom <= SMALL[1] - 1  # above the footer
        assert "approve" in rendered(keys)
        await wait_until(pilot, lambda: args.lines_below > 150, "the count of hidden lines")
        more = rendered(screen.query_one("#approval-more"))
        assert f"↓ {args.lines_below} more lines" in more
        assert "LAST-LINE" not in rendered(args)
        assert screen.focused is args
        await pilot.press("end")
        # The count changes before the next frame paints: wait for what the user sees.
        await wait_until(
            pilot,
            lambda: args.lines_below == 0 and "touch LAST-LINE" in rendered(args),
            "the view to reach the end and show the last line",
        )
        assert "more lines" not in rendered(screen.query_one("#approval-more"))
        await pilot.press("pageup", "up")
        await wait_until(pilot, lambda: args.lines_below > 0, "the view to scroll back up")
        assert dialog.region.contains_region(keys.region)


async def test_the_key_row_says_when_keys_are_not_active_yet(tmp_path: Path) -> None:
    # The dialog is pushed with a long arming delay, so a slow machine cannot arm it before
    # the test looks; the arming timer's effect is then applied through the reactive.
    app = make_app(shell_then_text(["ls"]), tmp_path)
    request = ApprovalRequest(
        session_id=app.session_id,
        tool_call_id="c1",
        tool_name="run_shell_command",
        args={"cmd": "ls"},
        reason="runs a command",
    )
    async with app.run_test(size=SMALL) as pilot:
        screen = ApprovalScreen(request, arm_delay=600)
        decided: list[Any] = []
        await app.push_screen(screen, decided.append)
        await pilot.pause()
        keys = screen.query_one("#approval-keys")
        assert not screen.armed
        assert "keys arm in a moment" in rendered(keys)
        await pilot.press("y")  # not armed: decides nothing
        await pilot.pause()
        assert app.screen is screen and decided == []
        screen.armed = True
        await pilot.pause()
        assert "keys arm in a moment" not in rendered(keys)
        await pilot.press("a")
        await pilot.pause()
        assert "press a again" in rendered(keys)
        await pilot.press("n")  # any other key goes back: it does not deny
        await pilot.pause()
        assert app.screen is screen and not screen.confirming_all
        assert "press a again" not in rendered(keys)
        await pilot.press("n")
        await wait_until(pilot, lambda: decided != [], "the decision")
        assert decided == [ApprovalDecision.DENY]


def _record(decision: Any, read_only: bool = False) -> ApprovalRecord:
    args = {"cmd": "touch PWNED; # \x1b[2K\x1b[1Gls -la"}
    return ApprovalRecord(
        session_id="s1",
        tool_call_id="c1",
        tool_name="run_shell_command",
        args=args,
        args_hash="h",
        decision=decision,
        reason="why",
        read_only=read_only,
    )


def test_each_decision_line_has_its_own_look_and_shows_hidden_characters() -> None:
    kinds = ("auto", "approve", "approve_all", "always_allow", "deny")
    lines = {d: approval_line(_record(d)) for d in kinds}
    for line in lines.values():
        assert "\x1b" not in line.plain
        assert "touch PWNED; # \\x1b[2K\\x1b[1Gls -la" in line.plain
        assert any(Style.parse(str(s.style)).reverse for s in line.spans)  # the escapes
    assert lines["auto"].plain.startswith("· auto-approved run_shell_command")
    assert lines["approve"].plain.startswith("✓ you approved run_shell_command")
    assert "ALL calls for this session" in lines["approve_all"].plain
    assert lines["always_allow"].plain.startswith("✓ you always allow run_shell_command")
    assert lines["deny"].plain.startswith("⊘ denied run_shell_command")
    looks = {d: str(line.style) for d, line in lines.items()}
    assert looks == {
        "auto": "dim",
        "approve": "green",
        "approve_all": "bold yellow",
        "always_allow": "green",
        "deny": "magenta",
    }
    assert ", read-only" in approval_line(_record("auto", read_only=True)).plain


@pytest.mark.slow
async def test_every_decision_leaves_one_line(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["echo one", "echo two"], final="ran"), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "run two")
        await approval_dialog(pilot, app)
        await pilot.press("y")
        await approval_dialog(pilot, app)
        await pilot.press("n")
        await settle(pilot, app)
        decisions = [n for n in notes(app) if "run_shell_command" in n]
        assert len(decisions) == 2
        assert decisions[0].startswith("✓ you approved run_shell_command echo one")
        assert decisions[1].startswith("⊘ denied run_shell_command echo two")


@pytest.mark.slow
async def test_approve_all_ends_with_clear(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["echo one"], final="ran"), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "run it")
        await approval_dialog(pilot, app)
        await pilot.press("a", "a")
        await settle(pilot, app)
        assert app.session.deps.auto_confirm and app.chat.status_bar.status.approve_all
        await submit(pilot, app, "/clear")
        await wait_until(pilot, lambda: not app.session.history, "/clear")
        await settle(pilot, app)
        assert not app.session.deps.auto_confirm
        assert not app.chat.status_bar.status.approve_all
        await submit(pilot, app, "run it again")
        screen = await approval_dialog(pilot, app)  # asks again
        assert screen.request.args == {"cmd": "echo one"}
        await pilot.press("n")
        await settle(pilot, app)


async def test_clear_keeps_a_configured_auto_confirm(tmp_path: Path) -> None:
    settings = Settings(theme="textual-dark", auto_confirm=True)
    app = make_app(text_stream("hi"), tmp_path, settings=settings)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "/clear")
        await settle(pilot, app)
        assert app.session.deps.auto_confirm and app.chat.status_bar.status.approve_all


async def test_the_sandbox_warning_stays_in_the_status_bar(tmp_path: Path) -> None:
    app = make_app(text_stream("hi"), tmp_path)
    warning = "no sandbox: commands run on this machine unisolated (docker: no engine)"
    app.session.deps.sandbox_warning = warning  # type: ignore[union-attr]
    async with app.run_test(size=SMALL) as pilot:
        assert await app.wait_ready()
        await pilot.pause()
        assert rendered(app.chat.status_bar).startswith(" fn │ ⚠ no sandbox │")
        assert any(warning in n for n in notes(app))
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        assert "⚠ no sandbox" in rendered(app.chat.status_bar)


async def test_a_sandbox_that_cannot_start_is_named(tmp_path: Path, monkeypatch: Any) -> None:
    from pydantic_ai.models.function import FunctionModel

    from co_tui.agent.build import build_agent
    from co_tui.tui.app import CoApp

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such-docker.sock")
    settings = Settings(theme="textual-dark", sandbox_backend="docker")
    model = FunctionModel(stream_function=text_stream("hi"), model_name="fn")
    bundle = build_agent(settings, model=model, instructions="test")
    app = CoApp(settings, bundle=bundle, history_path=None)
    async with app.run_test(size=SMALL) as pilot:
        assert not await app.wait_ready()
        await pilot.pause()
        (note,) = [n for n in notes(app) if "cannot start" in n]
        assert note.startswith("✗ the sandbox cannot start: ")
        assert "docker" in note


async def test_typing_on_while_the_dialog_opens_neither_approves_nor_loses_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A loaded machine can pause longer than the 0.6 s arming delay between two pilot keys.
    monkeypatch.setattr(armed, "ARM_DELAY_S", 3.0)
    app = make_app(shell_then_text(["touch should-not-exist"], final="ok"), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "make a file")
        # The next message typed on, key after key, while the dialog opens: y approves, a
        # approves all, p always allows, n denies, once armed; every key puts arming off.
        typed, in_dialog = "", 0
        for key in itertools.cycle(("y", "a", "p", "x", "backspace", "n")):
            await pilot.press(key)
            typed = typed[:-1] if key == "backspace" else typed + key
            if isinstance(app.screen, ApprovalScreen):
                in_dialog += 1
                if in_dialog == 1:
                    assert "keys arm in a moment" in rendered(app.screen.keys)
                if in_dialog == 12:
                    break
            assert len(typed) < 500, "the dialog never opened"
        screen = app.screen
        assert isinstance(screen, ApprovalScreen) and not screen.armed
        await wait_until(pilot, lambda: screen.armed, "the dialog to arm once typing stops")
        assert app.chat.prompt.text == typed  # every key, in order, in the prompt
        note = rendered(screen.keys)
        assert re.search(r"\d+ keys typed early went to the prompt · Ctrl\+C cancels", note)
        assert not (tmp_path / "should-not-exist").exists()
        await pilot.press("n")
        await settle(pilot, app)
        assert app.query_one(ToolCallBlock).status == "denied"
        assert app.chat.prompt.text == typed
