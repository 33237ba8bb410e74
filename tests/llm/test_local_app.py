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


async def test_a_model_downloaded_in_setup_is_the_one_that_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/setup's embedded-model catalog, end to end: the file comes from a host on 127.0.0.1
    (the user's mirror), and the session switches to a server started on that file."""
    from co_tui.config.paths import models_dir
    from co_tui.tui.screens.setup import SetupScreen
    from tests.servers.file_host import FileHostServer, smollm2_file
    from tests.tui.helpers import make_app, text_stream

    host = FileHostServer(smollm2_file()).start()
    monkeypatch.setenv("CO_TUI_LOCAL_MODEL_MIRROR", host.url)
    app = make_app(
        text_stream("from the first model"),
        tmp_path,
        settings=local_settings(tmp_path, temperature=0.0),
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            assert await app.wait_ready(), app.load_error
            app.chat.prompt.text = "/setup"
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), "/setup")
            await pilot.press("down", "down", "down", "enter")  # the catalog, its first row
            await pilot.press("enter")  # smollm2-135m: download and use it
            downloaded = models_dir() / "SmolLM2-135M-Instruct.Q4_1.gguf"
            await wait_until(
                pilot,
                lambda: app.model_label().startswith("local"),
                "the switch to the downloaded model",
                timeout=120,
            )
            assert app.session.bundle is not None and app.session.bundle.resolved is not None
            assert app.session.bundle.resolved.detail == str(downloaded)
            app.chat.prompt.text = "What colour is the sky?"
            await pilot.press("enter")
            await wait_for_turn(pilot, app, 120)
            (answer,) = app.query(AssistantMessage)
            assert answer.text.strip() and "from the first model" not in answer.text
            endpoint = local_server.running_endpoint()
            assert endpoint is not None
            model_file = Path(f"/proc/{endpoint.pid}/cmdline").read_bytes().split(b"\0")
            assert str(downloaded).encode() in model_file  # the server loaded that file
    finally:
        local_server.shutdown()
        host.stop()
