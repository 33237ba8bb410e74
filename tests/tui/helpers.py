"""Build a CoApp around a FunctionModel and a SubprocessSandbox: no real provider, ever."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from textual.strip import Strip
from textual.widget import Widget

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.tui.app import CoApp
from co_tui.tui.messages import Settle
from co_tui.tui.screens.approval import ApprovalScreen

StreamFn = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[Any]]
SIZE = (100, 30)


def make_app(
    stream_fn: StreamFn,
    workspace: Path,
    *,
    settings: Settings | None = None,
    history_path: Path | None = None,
    session_id: str = "11111111-2222-3333-4444-555555555555",
    sandbox_choice: SandboxChoice | None = None,
) -> CoApp:
    """The app on a FunctionModel; commands run in `sandbox_choice` (default: subprocess)."""
    settings = settings or Settings(theme="textual-dark")
    model = FunctionModel(stream_function=stream_fn, model_name="fn")
    bundle = build_agent(settings, model=model, instructions="test")
    choice = sandbox_choice or SandboxChoice(SubprocessSandbox(workspace), "test sandbox")
    deps = create_deps(settings, workspace, session_id=session_id, sandbox_choice=choice)
    return CoApp(settings, bundle=bundle, deps=deps, history_path=history_path)


class StillClock:
    """A clock that moves only when told to: the activity line's elapsed time and spinner
    frame stand still in a snapshot."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def last_request(messages: list[ModelMessage]) -> ModelRequest | None:
    for m in reversed(messages):
        if isinstance(m, ModelRequest):
            return m
    return None


def last_tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    req = last_request(messages)
    return [p for p in (req.parts if req else []) if isinstance(p, ToolReturnPart)]


def text_stream(*chunks: str) -> StreamFn:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for c in chunks:
            yield c

    return fn


def shell_then_text(cmds: list[str], final: str = "done") -> StreamFn:
    """First request: call run_shell_command once per cmd; after results: answer with `final`
    followed by what the tools returned, so tests can see what reached the model."""

    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        returns = last_tool_returns(messages)
        if not returns:
            for i, cmd in enumerate(cmds):
                yield {i: DeltaToolCall(name="run_shell_command", json_args=_json({"cmd": cmd}),
                                        tool_call_id=f"call-{len(messages)}-{i}")}  # fmt: skip
            return
        yield final + "\n\n"
        for r in returns:
            yield f"- {r.tool_name}: {r.content}\n"

    return fn


def thinking(text: str) -> dict[int, DeltaThinkingPart]:
    return {0: DeltaThinkingPart(content=text)}


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


async def wait_until(
    pilot: Any, predicate: Callable[[], object], what: str, timeout: float = 15.0
) -> None:
    """Poll until `predicate()` holds; fail the test, naming `what`, when it never does."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:g}s waiting for {what}")
        await pilot.pause(0.01)


async def picker_settled(pilot: Any, app: CoApp) -> None:
    """Wait until the @ picker is open on the matches of what the prompt holds now: it lists
    and ranks in threads, so it can show an earlier query's matches for a moment."""

    def settled() -> bool:
        picker = app.chat.picker
        working = [w for w in app.workers if w.node is picker and not w.is_finished]
        return picker.open and not working

    await wait_until(pilot, settled, "the @ picker to show the matches of the last key")


async def drawn(pilot: Any, app: CoApp) -> None:
    """Wait until the transcript has handled every message posted to it so far."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    app.chat.transcript.post_message(Settle(done))
    await wait_until(pilot, done.done, "the transcript to draw what was posted to it")


async def settle(pilot: Any, app: CoApp) -> None:
    """Wait for the running turn (and what was queued behind it) and every answer's pump."""

    def idle() -> bool:
        return (
            not app.busy
            and not app.chat.busy
            and not app.chat.prompt.queued
            and all(
                m.is_settled
                for m in app.query("AssistantMessage").results()  # type: ignore[attr-defined]
            )
        )

    await pilot.pause()
    await wait_until(pilot, idle, "the turn to end and its answer to settle")
    await drawn(pilot, app)
    await wait_until(pilot, idle, "the turn's answers to settle")
    await pilot.pause()


async def approval_dialog(pilot: Any, app: CoApp, *, armed: bool = True) -> ApprovalScreen:
    """The approval dialog once it is open (and, by default, armed: keys decide)."""
    await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval dialog")
    screen = app.screen
    assert isinstance(screen, ApprovalScreen)
    if armed:
        await wait_until(pilot, lambda: screen.armed, "the approval dialog to arm")
    return screen


def on_screen(widget: Widget) -> list[Strip]:
    """The lines the screen draws inside `widget` (children and overlaps included): what
    reaches the terminal. Reads the compositor, a Textual internal pinned with the version."""
    strips = widget.screen._compositor.render_strips()
    region = widget.region
    return [strips[y].crop(region.x, region.right) for y in range(region.y, region.bottom)]


def rendered(widget: Widget) -> str:
    return "\n".join(strip.text for strip in on_screen(widget))


async def submit_for_snapshot(pilot: Any, text: str, *, settled: bool = True) -> None:
    """Type `text` into a ready app without a blinking cursor and send it; `settled`: wait
    until what it started has drawn."""
    app = pilot.app
    app.chat.prompt.cursor_blink = False
    assert await app.wait_ready()
    app.chat.prompt.text = text
    await pilot.press("enter")
    if settled:
        await settle(pilot, app)
