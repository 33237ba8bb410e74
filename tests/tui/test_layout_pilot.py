"""The layout follows the terminal's width (the sidebar folds away below 126 columns, and the
transcript never narrows as the terminal widens), the
status bar keeps what needs the user's attention whatever the width, and the token counts,
context meter and cost say what this turn and this session used."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage
from textual._context import visible_screen_stack
from textual.css.stylesheet import Stylesheet

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from co_tui.tui.screens.chat import ChatScreen
from tests.tui.helpers import (
    approval_dialog,
    make_app,
    rendered,
    settle,
    shell_then_text,
    text_stream,
    wait_until,
)

NARROW = (80, 24)
WIDE = (140, 30)


async def submit(pilot: Any, app: CoApp, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")


def status_line(app: CoApp) -> str:
    return rendered(app.chat.status_bar)


# -- the transcript's width --
async def test_an_answer_that_outgrows_the_screen_keeps_the_width_it_was_wrapped_to(
    tmp_path: Path,
) -> None:
    """The scrollbar's column is the transcript's from the start: when an answer first
    needs the scrollbar, its text is not wrapped again one column narrower (the whole answer
    rendered again, 15-80 ms, as it streams or just after it ends)."""
    answer = "".join(f"Paragraph {n} of an answer longer than the screen.\n\n" for n in range(60))
    app = make_app(text_stream(answer), tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await app.wait_ready()
        await pilot.pause()
        transcript = app.chat.transcript
        width_before = transcript.scrollable_content_region.width
        assert transcript.max_scroll_y == 0
        await submit(pilot, app, "a long answer, please")
        await settle(pilot, app)
        assert transcript.max_scroll_y > 0  # the answer outgrew the screen
        assert transcript.scrollable_content_region.width == width_before
        shown = rendered(app.chat.transcript)
        assert "Paragraph 59 of an answer longer than the screen." in shown


# -- the sidebar's place --
@pytest.mark.parametrize(("size", "layout"), [(NARROW, "-narrow"), (WIDE, "-wide")])
async def test_the_screen_starts_in_its_widths_layout_and_is_styled_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], layout: str
) -> None:
    """The width's class is the screen's before its widgets are styled: the first resize
    does not style them all again (10-40 ms, just as the first keys are typed)."""
    whole_screen_stylings = 0
    textual_update_nodes = Stylesheet.update_nodes

    def counted(self: Stylesheet, nodes: Iterable[Any], animate: bool = False) -> None:
        nonlocal whole_screen_stylings
        nodes = list(nodes)
        whole_screen_stylings += any(isinstance(node, ChatScreen) for node in nodes)
        textual_update_nodes(self, nodes, animate=animate)

    monkeypatch.setattr(Stylesheet, "update_nodes", counted)
    app = make_app(text_stream("hi"), tmp_path)
    async with app.run_test(size=size) as pilot:
        await app.wait_ready()
        await pilot.pause()
        assert app.chat.has_class(layout)
        assert whole_screen_stylings == 1  # Textual's own, as the screen is first shown


async def test_narrow_terminal_folds_the_sidebar_and_ctrl_b_draws_it_over_the_transcript(
    tmp_path: Path,
) -> None:
    app = make_app(text_stream("hi"), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await app.wait_ready()
        await pilot.pause()
        chat = app.chat
        assert not chat.sidebar.display
        assert chat.transcript.size.width == NARROW[0] - 2  # the whole width (padding aside)

        await pilot.press("ctrl+b")
        await pilot.pause()
        assert chat.sidebar.display and chat.sidebar.region.width > 0
        assert chat.transcript.size.width == NARROW[0] - 2  # drawn over it, not beside it
        assert chat.sidebar.region.right == NARROW[0]

        await pilot.press("ctrl+b")
        await pilot.pause()
        assert not chat.sidebar.display


async def test_the_transcript_never_narrows_as_the_terminal_widens(tmp_path: Path) -> None:
    app = make_app(text_stream("hi"), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await app.wait_ready()
        chat = app.chat
        widths: dict[int, int] = {}
        for width in range(80, 201):
            await pilot.resize_terminal(width, 30)
            await pilot.pause()
            widths[width] = chat.transcript.scrollable_content_region.width
            assert (
                chat.transcript.region.right + chat.sidebar.display * chat.sidebar.region.width
                <= width
            )
        assert all(widths[w] <= widths[w + 1] for w in range(80, 200)), widths
        assert chat.sidebar.display and chat.sidebar.region.width == 38  # at 200 columns
        assert widths[200] == 200 - 38 - 3  # the rest is the transcript's (padding, scrollbar)
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert not chat.sidebar.display
        assert chat.transcript.scrollable_content_region.width == 200 - 3
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert (
            chat.sidebar.display and chat.transcript.scrollable_content_region.width == widths[200]
        )


async def test_the_sidebar_comes_back_when_the_terminal_is_wide_again(tmp_path: Path) -> None:
    app = make_app(text_stream("hi"), tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await app.wait_ready()
        await pilot.pause()
        chat = app.chat
        assert chat.sidebar.display
        wide_transcript = chat.transcript.size.width
        assert wide_transcript < WIDE[0] - 30  # beside the transcript

        await pilot.resize_terminal(*NARROW)
        await pilot.pause()
        assert not chat.sidebar.display

        await pilot.press("ctrl+b")  # a look while narrow ...
        await pilot.pause()
        assert chat.sidebar.display
        await pilot.resize_terminal(*WIDE)
        await pilot.pause()
        assert chat.sidebar.display and chat.transcript.size.width == wide_transcript
        await pilot.resize_terminal(*NARROW)  # ... which ends when the terminal grew
        await pilot.pause()
        assert not chat.sidebar.display


async def test_a_sidebar_hidden_by_the_user_stays_hidden_across_resizes(tmp_path: Path) -> None:
    app = make_app(text_stream("hi"), tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await app.wait_ready()
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert not app.chat.sidebar.display
        await pilot.resize_terminal(*NARROW)
        await pilot.pause()
        await pilot.resize_terminal(*WIDE)
        await pilot.pause()
        assert not app.chat.sidebar.display
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert app.chat.sidebar.display


# -- the status bar by priority --
async def test_at_80_columns_the_activity_line_says_a_decision_waits(
    tmp_path: Path,
) -> None:
    app = make_app(shell_then_text(["echo hi"]), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await app.wait_ready()
        await submit(pilot, app, "run it")
        await approval_dialog(pilot, app)
        await pilot.pause()
        line = rendered(app.chat.activity_line)
        assert "waiting for you" in line and "Esc cancels" in line
        assert "waiting" not in status_line(app)  # said once, not twice
        await pilot.press("n")
        await settle(pilot, app)
        assert not app.chat.activity_line.display


def terminal_lines(app: CoApp) -> list[str]:
    """What reaches the terminal, the screens under a modal included (as Textual's own
    screenshot draws it; a Textual internal pinned with the version)."""
    visible_screen_stack.set(app._background_screens)
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def test_at_80x24_the_approval_dialog_leaves_the_activity_line_in_sight(
    tmp_path: Path,
) -> None:
    app = make_app(shell_then_text(["echo hi"]), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await app.wait_ready()
        await submit(pilot, app, "run it")
        dialog = await approval_dialog(pilot, app)
        await pilot.pause()
        shown = terminal_lines(app)
        activity_row = app.chat.activity_line.region.y
        assert "waiting for you" in shown[activity_row]
        assert "working…" in shown[activity_row + 2]  # the prompt, below it
        box = dialog.query_one("#approval-dialog").region
        assert box.bottom <= activity_row
        assert any("y  approve" in line for line in shown[box.y : box.bottom])  # all of it


async def test_at_80x24_the_arguments_get_the_rows_before_the_activity_line(
    tmp_path: Path,
) -> None:
    """A call whose arguments would not all show above the activity line (a warning about
    hidden characters takes rows too) takes the dialog's old place, over the line."""
    cmd = "touch PWNED; # \x1b[2K\x1b[1Gls -la"
    app = make_app(shell_then_text([cmd]), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await app.wait_ready()
        await submit(pilot, app, "list the files")
        dialog = await approval_dialog(pilot, app)
        await pilot.pause()
        shown = "\n".join(terminal_lines(app))
        assert "touch PWNED; # \\x1b[2K\\x1b[1Gls -la" in shown
        assert "more line" not in shown and dialog.args_view.lines_below == 0


async def test_a_running_turn_keeps_its_line_beside_a_crowded_status_bar(tmp_path: Path) -> None:
    release = asyncio.Event()

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "thinking it over"
        await release.wait()
        yield " done"

    app = make_app(slow, tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await app.wait_ready()
        app.chat.status = replace(
            app.chat.status, mcp="MCP 2/3 (failed: a-broken-server)", note="retrying in 3s"
        )
        await submit(pilot, app, "go")
        await wait_until(pilot, lambda: app.chat.turn_running, "the turn to start")
        await pilot.pause()
        activity = rendered(app.chat.activity_line)
        assert "answering…" in activity and "· Esc cancels" in activity
        line = status_line(app)
        assert "retrying in 3s" in line
        assert "failed: a-broken-server" not in line  # the least useful field gave way
        release.set()
        await settle(pilot, app)


# -- the sidebar while a decision waits --
async def test_the_sidebar_says_a_call_waits_for_approval_then_that_it_ran(
    tmp_path: Path,
) -> None:
    app = make_app(shell_then_text(["echo hi"]), tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await app.wait_ready()
        await submit(pilot, app, "run it")
        await approval_dialog(pilot, app)
        await pilot.pause()
        tools = str(app.chat.sidebar._tools_view.render())
        assert "waiting for approval" in tools and "running" not in tools
        await pilot.press("y")
        await settle(pilot, app)
        tools = str(app.chat.sidebar._tools_view.render())
        assert "ok" in tools and "waiting" not in tools


# -- tokens --
async def test_a_new_turn_does_not_show_the_last_turns_tokens(tmp_path: Path) -> None:
    release = asyncio.Event()
    turns = 0

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        nonlocal turns
        turns += 1
        yield "an answer of several words"
        if turns == 2:
            await release.wait()

    app = make_app(stream, tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await app.wait_ready()
        await submit(pilot, app, "first")
        await settle(pilot, app)
        first_total = app.chat.status.session_tokens
        assert first_total > 0 and app.chat.status.turn_tokens == first_total

        await submit(pilot, app, "second")
        await wait_until(pilot, lambda: app.chat.turn_running, "the second turn to start")
        await pilot.pause()
        usage = str(app.chat.sidebar._usage_view.render())
        assert "none yet" in usage and f"session {first_total:,}" in usage
        assert app.chat.status.turn_tokens == 0
        assert "turn 0 tok" in status_line(app)
        release.set()
        await settle(pilot, app)
        assert app.chat.status.session_tokens > first_total


async def test_what_a_turn_used_and_yolo_reach_the_status_bar(tmp_path: Path) -> None:
    """The session changes (a turn, /yolo); the line the user reads follows, through the
    chat screen's one status value."""
    app = make_app(text_stream("an answer of several words"), tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await app.wait_ready()
        await pilot.pause()
        line = status_line(app)
        assert "turn 0 tok · session 0 tok" in line and "yolo off" in line

        await submit(pilot, app, "a question")
        await settle(pilot, app)
        used = app.session.session_tokens
        assert used > 0
        assert f"turn {used:,} tok · session {used:,} tok" in status_line(app)

        await submit(pilot, app, "/yolo on")
        await wait_until(pilot, lambda: "yolo ON" in status_line(app), "yolo ON in the bar")
        assert "yolo off" not in status_line(app)
        await submit(pilot, app, "/yolo off")
        await wait_until(pilot, lambda: "yolo off" in status_line(app), "yolo off in the bar")
        assert f"session {used:,} tok" in status_line(app)


def stored_app(workspace: Path, db: Path, **kw: Any) -> CoApp:
    settings = Settings(theme="textual-dark")
    model = FunctionModel(stream_function=text_stream("a stored answer"), model_name="fn")
    bundle = build_agent(settings, model=model, instructions="test")
    choice = SandboxChoice(SubprocessSandbox(workspace), "test sandbox")
    deps = create_deps(settings, workspace, sandbox_choice=choice)
    return CoApp(
        settings, bundle=bundle, deps=deps, history_path=None, session_store=SessionStore(db), **kw
    )


async def test_continue_restores_the_sessions_token_total(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    first = stored_app(tmp_path, db)
    async with first.run_test(size=WIDE) as pilot:
        await first.wait_ready()
        await submit(pilot, first, "remember this")
        await settle(pilot, first)
        total = first.chat.status.session_tokens
        first.exit()
    assert total > 0

    second = stored_app(tmp_path, db, continue_latest=True)
    async with second.run_test(size=WIDE) as pilot:
        await second.wait_ready()
        await wait_until(
            pilot, lambda: second.chat.status.session_tokens == total, "the stored total"
        )
        assert f"session {total:,} tok" in status_line(second)
        assert second.chat.status.context_tokens > 0


# -- the context meter --
async def test_the_status_bar_shows_how_full_the_context_window_is(tmp_path: Path) -> None:
    settings = Settings(theme="textual-dark", context_window=4096)
    app = make_app(text_stream("an answer"), tmp_path, settings=settings)
    async with app.run_test(size=WIDE) as pilot:
        await app.wait_ready()
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        context = app.session.totals.context_tokens
        assert context > 0
        assert f"ctx {round(100 * context / 4096)}% of 4k" in status_line(app)


async def test_without_a_known_window_the_meter_shows_the_tokens_alone(tmp_path: Path) -> None:
    app = make_app(text_stream("an answer"), tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await app.wait_ready()
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        line = status_line(app)
        assert f"ctx {app.session.totals.context_tokens:,} tok" in line
        assert "%" not in line and "$" not in line  # the test model has no window, no price


# -- the cost --
async def test_a_priced_models_session_shows_its_estimated_cost(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    answer = ModelResponse(
        parts=[TextPart("an answer")],
        model_name="gpt-4o",
        provider_name="openai",
        provider_url="https://api.openai.com/v1/",
        usage=RequestUsage(input_tokens=10_000, output_tokens=2_000),
    )
    history = [ModelRequest.user_text_prompt("a question"), answer]
    SessionStore(db).save("priced", history, title="priced", cwd=str(tmp_path.resolve()))
    app = stored_app(tmp_path, db, resume="priced")
    async with app.run_test(size=WIDE) as pilot:
        await app.wait_ready()
        await wait_until(pilot, lambda: app.chat.status.cost, "the session's cost")
        assert app.chat.status.cost == "$0.0450"  # 10k in at $2.50/M + 2k out at $10/M
        assert "$0.0450" in status_line(app)
        assert "session 12,000 tok" in status_line(app)
        assert "session 12,000 · about $0.0450" in str(app.chat.sidebar._usage_view.render())


async def test_warnings_and_yolo_on_outrank_the_model_and_the_totals(tmp_path: Path) -> None:
    app = make_app(text_stream("hi"), tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await app.wait_ready()
        assert app.session.deps is not None
        app.session.deps.set_approve_all(True)
        app.refresh_status()
        app.chat.status = replace(
            app.chat.status,
            warning="project settings not trusted",
            note="waiting for your decision",
        )
        await pilot.pause()
        line = status_line(app)
        for kept in ("⚠ project settings not trusted", "yolo ON", "waiting for your decision"):
            assert kept in line
        assert "tok" not in line  # the totals gave way first
