"""Build a CoApp around a FunctionModel and a SubprocessSandbox: no real provider, ever."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

from co_tui.agent import build_agent
from co_tui.config import Settings
from co_tui.deps import create_deps
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.tui.app import CoApp

StreamFn = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[Any]]
SIZE = (100, 30)


def make_app(
    stream_fn: StreamFn,
    workspace: Path,
    *,
    settings: Settings | None = None,
    history_path: Path | None = None,
    session_id: str = "11111111-2222-3333-4444-555555555555",
) -> CoApp:
    settings = settings or Settings(theme="textual-dark")
    bundle = build_agent(settings, model=FunctionModel(stream_function=stream_fn, model_name="fn"),
                         instructions="test")  # fmt: skip
    choice = SandboxChoice(SubprocessSandbox(workspace), "test sandbox")
    deps = create_deps(settings, workspace, session_id=session_id, sandbox_choice=choice)
    return CoApp(settings, bundle=bundle, deps=deps, history_path=history_path)


def last_request(messages: list[ModelMessage]) -> ModelRequest | None:
    for m in reversed(messages):
        if isinstance(m, ModelRequest):
            return m
    return None


def last_tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    req = last_request(messages)
    return [p for p in (req.parts if req else []) if isinstance(p, ToolReturnPart)]


def user_prompts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]


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


async def settle(pilot: Any, app: CoApp) -> None:
    """Wait for the running turn and every answer's pump to finish."""
    for _ in range(200):
        await pilot.pause()
        if not app.turn_running and all(
            m.is_settled
            for m in app.query("AssistantMessage").results()  # type: ignore[attr-defined]
        ):
            break
    await pilot.pause()
