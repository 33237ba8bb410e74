"""The app on the embedded model: the server starts with progress shown, an answer streams in."""

from __future__ import annotations

from pathlib import Path

import pytest

from co_tui.context.deps import create_deps
from co_tui.llm.local import server as local_server
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.tui.app import CoApp
from co_tui.tui.screens.approval import ApprovalScreen
from co_tui.tui.widgets.assistant_message import AssistantMessage
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.llm.conftest import local_settings
from tests.tui.helpers import SIZE, settle, wait_until


async def wait_for_turn(pilot, app: CoApp, seconds: float) -> None:
    for _ in range(int(seconds / 0.1)):
        await pilot.pause(0.1)
        if not app.turn_running:
            break
    await settle(pilot, app)


pytestmark = [pytest.mark.llm, pytest.mark.usefixtures("allow_model_requests")]


async def test_app_starts_the_local_model_and_shows_a_streamed_answer(tmp_path: Path) -> None:
    settings = local_settings(tmp_path)
    choice = SandboxChoice(SubprocessSandbox(tmp_path), "test sandbox")
    deps = create_deps(settings, tmp_path, sandbox_choice=choice)
    app = CoApp(settings, deps=deps, history_path=None)
    try:
        async with app.run_test(size=SIZE) as pilot:
            assert await app.wait_ready(), app.load_error
            assert "local" in app.model_label()
            notes = " ".join(str(getattr(w, "_source", "")) for w in app.chat.transcript.items)
            assert "local model ready" in notes
            app.chat.prompt.text = "What colour is the sky?"
            await pilot.press("enter")
            await wait_for_turn(pilot, app, 120)
            (answer,) = app.query(AssistantMessage)
            assert answer.text.strip()
            assert app.session.last_answer == answer.text
    finally:
        local_server.shutdown()


async def test_run_ls_asks_for_ls_and_answers_after_its_output(
    tmp_path: Path,
) -> None:
    """The dialog for `ls`, then an answer. Retrieval picks the tool here, so the test is of the
    app's path, not of the model's choice (the eval measures that)."""
    for name in ("budget.csv", "notes.txt", "plan.md"):
        (tmp_path / name).write_text("x\n")
    settings = local_settings(tmp_path, temperature=0.0, local_tool_choice="retrieval")
    choice = SandboxChoice(SubprocessSandbox(tmp_path), "test sandbox")
    deps = create_deps(settings, tmp_path, sandbox_choice=choice)
    app = CoApp(settings, deps=deps, history_path=None)
    try:
        async with app.run_test(size=SIZE) as pilot:
            assert await app.wait_ready(), app.load_error
            app.chat.prompt.text = "run the command ls"
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen),
                             "the approval dialog", timeout=120)  # fmt: skip
            screen = app.screen
            assert isinstance(screen, ApprovalScreen)
            await wait_until(pilot, lambda: screen.armed, "the approval dialog to arm")
            assert screen.request.tool_name == "run_shell_command"
            assert screen.request.args["cmd"].split()[0] == "ls", screen.request.args
            await pilot.press("y")
            await wait_for_turn(pilot, app, 120)
            assert app.query_one(ToolCallBlock).status == "ok"
            assert app.session.last_answer.strip()
    finally:
        local_server.shutdown()
