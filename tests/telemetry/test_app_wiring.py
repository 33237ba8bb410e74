"""The span viewer inside CoApp: F2 during a running turn shows its spans as they end;
Escape returns to the chat; /spans opens it with a filter."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from co_tui.config.settings import Settings
from co_tui.telemetry import default_db_path, setup_telemetry, shutdown_telemetry
from co_tui.tui.screens.chat import ChatScreen
from co_tui.tui.screens.spans import SpanScreen
from tests.helpers import make_bundle, make_deps
from tests.telemetry.test_viewer import names, until
from tests.tui.helpers import last_tool_returns, make_app

SIZE = (120, 40)


def shell_then_slow_answer(release: asyncio.Event) -> Any:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if not last_tool_returns(messages):
            yield {
                0: DeltaToolCall(
                    name="run_shell_command", json_args='{"cmd": "echo live"}', tool_call_id="c1"
                )
            }
            return
        await release.wait()  # the turn stays open until the test has looked
        yield "done"

    return fn


async def test_f2_shows_spans_of_the_running_turn(tmp_path: Path) -> None:
    settings = Settings(auto_confirm=True)  # the shell call runs without the modal
    assert setup_telemetry(settings) is not None
    release = asyncio.Event()
    app = make_app(shell_then_slow_answer(release), tmp_path, settings=settings)
    try:
        async with app.run_test(size=SIZE) as pilot:
            assert await app.wait_ready()
            await pilot.press("f2")
            await until(pilot, lambda: isinstance(app.screen, SpanScreen))
            screen = app.screen
            assert isinstance(screen, SpanScreen) and screen.db_path == default_db_path()
            app.start_turn("run it")
            # Spans that ended show up while the turn is still running.
            await until(pilot, lambda: "sandbox_command" in names(screen.table), tries=200)
            assert app.turn_running and "turn" not in names(screen.table)
            assert "execute_tool run_shell_command" in names(screen.table)
            release.set()
            await until(pilot, lambda: "turn" in names(screen.table), tries=200)
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, ChatScreen))
            app.run_command("/spans sandbox")
            await until(pilot, lambda: isinstance(app.screen, SpanScreen))
            await until(pilot, lambda: names(app.screen.table) == ["sandbox_command"])
    finally:
        shutdown_telemetry()


async def test_spans_command_without_the_app(tmp_path: Path) -> None:
    from co_tui.session.commands.dispatch import dispatch
    from co_tui.session.commands.registry import CommandContext

    shown: list[object] = []
    ctx = CommandContext([], make_deps(tmp_path), make_bundle("test"), Settings(), shown.append)
    result = await dispatch(ctx, "/spans")
    assert result.known and "co-tui traces" in str(shown[0])
