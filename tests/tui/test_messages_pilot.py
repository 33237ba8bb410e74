"""A turn reaches the widgets as Textual messages: the prompt goes up as `Submitted`, each
event comes down to the chat screen as a `SessionEvent` and on to the widget that shows it
as a `ShowEvent`; the approval is an `ApprovalAsked` the screen answers. Nothing else
carries the turn to the screen."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall
from textual._context import active_message_pump
from textual.message import Message

from co_tui.config.settings import Settings
from co_tui.tui.app import CoApp
from co_tui.tui.messages import ApprovalAsked, SessionEvent, ShowEvent, Submitted
from co_tui.tui.screens.chat import ChatScreen
from co_tui.tui.widgets.sidebar import Sidebar
from co_tui.tui.widgets.transcript import Transcript
from tests.tui.helpers import SIZE, approval_dialog, last_tool_returns, make_app, settle, thinking


async def _think_answer_and_call(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[Any]:
    if last_tool_returns(messages):
        yield "all done"
        return
    yield thinking("list the files first")
    yield "Let me look."
    args = '{"cmd": "echo listed"}'
    yield {1: DeltaToolCall(name="run_shell_command", json_args=args, tool_call_id="c1")}


@pytest.mark.slow
async def test_a_turn_travels_as_messages(tmp_path: Path) -> None:
    received: list[tuple[str, Message]] = []

    def hook(message: Message) -> None:
        receiver = active_message_pump.get()
        received.append((type(receiver).__name__, message))

    app = make_app(_think_answer_and_call, tmp_path, settings=Settings(verbose=True))
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        assert await app.wait_ready()
        app.chat.prompt.text = "what is here?"
        await pilot.press("enter")
        await pilot.pause()
        await approval_dialog(pilot, app)
        await pilot.press("y")
        await settle(pilot, app)

    def of(kind: type[Message], receiver: type) -> list[Message]:
        return [m for r, m in received if isinstance(m, kind) and r == receiver.__name__]

    (submitted,) = of(Submitted, CoApp)  # posted by the screen, handled by the app
    assert isinstance(submitted, Submitted) and submitted.prompt == "what is here?"
    assert len(of(ApprovalAsked, ChatScreen)) == 1

    down = [m.event.type for m in of(SessionEvent, ChatScreen)]  # type: ignore[attr-defined]
    assert down[0] == "turn_start" and down[-2:] == ["response_complete", "turn_end"]
    assert down.index("thinking_start") < down.index("text_start") < down.index("tool_call")
    assert down.index("tool_call") < down.index("approval") < down.index("tool_result")

    to_transcript = [m.event.type for m in of(ShowEvent, Transcript)]  # type: ignore[attr-defined]
    to_sidebar = [m.event.type for m in of(ShowEvent, Sidebar)]  # type: ignore[attr-defined]
    # Answers are the transcript's; thinking and usage are the sidebar's; both show the tool
    # call, its approval (a line; the call's state) and the turn's boundaries.
    assert {"text_start", "text_delta", "text_end", "approval"} <= set(to_transcript)
    assert not {"thinking_start", "thinking_delta", "usage"} & set(to_transcript)
    assert {"thinking_start", "thinking_delta", "usage"} <= set(to_sidebar)
    assert "text_delta" not in set(to_sidebar)
    for kind in ("turn_start", "tool_call", "approval", "tool_result", "turn_end"):
        assert kind in to_transcript and kind in to_sidebar
    # Each event the screen routes is delivered once to each widget, in the order emitted.
    routed = [t for t in down if t in set(to_transcript)]
    assert to_transcript == routed
