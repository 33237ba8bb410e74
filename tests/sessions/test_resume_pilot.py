"""The app records every turn; reopening (the --continue / --resume equivalents) brings the
transcript and the model's memory back, and a pending approval is asked again."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from textual import events

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from co_tui.tui.screens.approval import ApprovalScreen
from co_tui.tui.screens.sessions import ConfirmScreen, SessionsScreen
from co_tui.tui.widgets.tool_call import ToolCallBlock
from co_tui.tui.widgets.transcript import MAX_ITEMS
from co_tui.tui.widgets.user_message import UserMessage
from tests.helpers import user_prompts
from tests.tui.helpers import SIZE, approval_dialog, last_tool_returns, settle

Seen = list[list[ModelMessage]]


def make_app(stream: Any, workspace: Path, db: Path, **kw: Any) -> CoApp:
    settings = Settings(theme="textual-dark")
    model = FunctionModel(stream_function=stream, model_name="fn")
    bundle = build_agent(settings, model=model, instructions="test")
    choice = SandboxChoice(SubprocessSandbox(workspace), "test sandbox")
    deps = create_deps(settings, workspace, sandbox_choice=choice)
    return CoApp(settings, bundle=bundle, deps=deps, history_path=None,
                 session_store=SessionStore(db), **kw)  # fmt: skip


def echo_model(seen: Seen) -> Any:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        seen.append(list(messages))
        prompts = user_prompts(messages)
        yield f"You said: {prompts[-1]} (I remember {len(prompts) - 1} earlier prompts)"

    return fn


async def submit(pilot: Any, app: CoApp, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")
    await settle(pilot, app)


async def wait_for(pilot: Any, predicate: Any, tries: int = 200) -> None:
    for _ in range(tries):
        await pilot.pause()
        if predicate():
            return
    raise AssertionError("condition never became true")


def user_texts(app: CoApp) -> list[str]:
    return [w.text for w in app.chat.transcript.items if isinstance(w, UserMessage)]


async def test_quit_and_continue_brings_transcript_and_memory_back(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    seen: Seen = []
    first = make_app(echo_model(seen), tmp_path, db)
    async with first.run_test(size=SIZE) as pilot:
        await first.wait_ready()
        await submit(pilot, first, "My name is Ada")
        await submit(pilot, first, "I like tea")
        first.exit()

    second = make_app(echo_model(seen), tmp_path, db, continue_latest=True)
    async with second.run_test(size=SIZE) as pilot:
        await second.wait_ready()
        await wait_for(pilot, lambda: len(user_texts(second)) == 2)
        assert user_texts(second) == ["My name is Ada", "I like tea"]
        last = second.chat.transcript.items[-1]
        assert "You said: I like tea" in last._source.markup  # type: ignore[attr-defined]
        await submit(pilot, second, "What is my name?")
        # The model's memory is back: the new request carries the earlier turns.
        assert user_prompts(seen[-1]) == ["My name is Ada", "I like tea", "What is my name?"]
        assert "I remember 2 earlier prompts" in second.session.last_answer

    (info,) = SessionStore(db).list()
    assert info.turns == 3 and info.title == "My name is Ada" and info.message_count == 6


def questions_and_answers(turns: int) -> list[ModelMessage]:
    """A stored conversation of `turns` questions, each with its answer."""
    history: list[ModelMessage] = []
    for n in range(turns):
        history.append(ModelRequest(parts=[UserPromptPart(content=f"question {n}")]))
        history.append(ModelResponse(parts=[TextPart(content=f"answer {n}")]))
    return history


async def test_a_long_session_opens_with_only_the_visible_part_built(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    store = SessionStore(db)
    history = questions_and_answers(300)
    store.save("long-session", history, title="long", cwd=str(tmp_path.resolve()))
    app = make_app(echo_model([]), tmp_path, db, resume="long")
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_ready()
        await wait_for(pilot, lambda: len(app.session.history) == 600)
        mounted = app.chat.transcript.items
        assert len(mounted) <= MAX_ITEMS
        assert user_texts(app)[-1] == "question 299"
        assert len(app.chat.transcript._archived) == 600 - len(mounted)


async def test_a_prompt_typed_while_a_long_session_resumes_is_sent(tmp_path: Path) -> None:
    """Keys typed before the stored session is on screen are not lost: the prompt is sent
    once the session is ready, after its 1,000 turns, and lands in the prompt history."""
    db = tmp_path / "sessions.db"
    history = questions_and_answers(1000)
    SessionStore(db).save("long-session", history, title="long", cwd=str(tmp_path.resolve()))
    seen: Seen = []
    app = make_app(echo_model(seen), tmp_path, db, resume="long")
    async with app.run_test(size=SIZE) as pilot:
        for key in [*"typed early", "enter"]:  # at once, while the session loads
            name = {" ": "space"}.get(key, key)
            app.post_message(events.Key(name, None if key == "enter" else key))
        await wait_for(pilot, lambda: bool(seen), tries=2000)
        await settle(pilot, app)
        assert user_prompts(seen[0])[-2:] == ["question 999", "typed early"]
        assert "typed early" in app.chat.prompt.prompt_history.entries
        assert user_texts(app)[-2:] == ["question 999", "typed early"]


def shell_call(marker: str) -> Any:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        returns = last_tool_returns(messages)
        if returns:
            yield f"Done: {returns[0].content}"
            return
        args = json.dumps({"cmd": f"echo made > {marker} && echo created"})
        yield {0: DeltaToolCall(name="run_shell_command", json_args=args, tool_call_id="c1")}

    return fn


@pytest.mark.slow
async def test_a_pending_approval_is_asked_again_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    first = make_app(shell_call("made.txt"), tmp_path, db)
    async with first.run_test(size=SIZE) as pilot:
        await first.wait_ready()
        first.chat.prompt.text = "make the file"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(first.screen, ApprovalScreen))
        first.exit()  # closed while the modal is open
    assert not (tmp_path / "made.txt").exists()
    assert SessionStore(db).list()[0].has_pending

    second = make_app(shell_call("made.txt"), tmp_path, db, continue_latest=True)
    async with second.run_test(size=SIZE) as pilot:
        await second.wait_ready()
        screen = await approval_dialog(pilot, second)
        assert screen.request.args["cmd"].startswith("echo made")
        await pilot.press("y")
        await settle(pilot, second)
        assert (tmp_path / "made.txt").read_text() == "made\n"
        assert "created" in second.session.last_answer
        assert second.query_one(ToolCallBlock).status == "ok"
        assert user_texts(second) == ["make the file"]
    assert not SessionStore(db).list()[0].has_pending


@pytest.mark.slow
async def test_resume_command_lists_searches_deletes_and_opens(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    seen: Seen = []
    app = make_app(echo_model(seen), tmp_path, db)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_ready()
        await submit(pilot, app, "Plan the trip to Lisbon")
        app.run_command("/clear")
        await wait_for(pilot, lambda: not app.session.history)
        await submit(pilot, app, "Draft the quarterly report")
        app.run_command("/clear")
        await wait_for(pilot, lambda: not app.session.history)
        await submit(pilot, app, "Scratch session")

        app.run_command("/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await wait_for(pilot, lambda: screen.table.row_count == 3)
        # Delete the newest (the scratch session) after confirming.
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.table.row_count == 2)
        # Search, then open.
        await pilot.press("slash")
        for key in "lisbon":
            await pilot.press(key)
        await wait_for(pilot, lambda: screen.table.row_count == 1)
        await pilot.press("enter")  # back to the table
        await pilot.press("enter")  # open
        await wait_for(pilot, lambda: user_texts(app) == ["Plan the trip to Lisbon"])
        await submit(pilot, app, "And the hotel?")
        assert user_prompts(seen[-1]) == ["Plan the trip to Lisbon", "And the hotel?"]
    titles = sorted(i.title for i in SessionStore(db).list())
    assert titles == ["Draft the quarterly report", "Plan the trip to Lisbon"]


def echo_or_shell() -> Any:
    """A prompt `run <cmd>` calls the shell with <cmd>; anything else is echoed."""

    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        returns = last_tool_returns(messages)
        if returns:
            yield f"Done: {returns[0].content}"
            return
        prompt = user_prompts(messages)[-1]
        if prompt.startswith("run "):
            args = json.dumps({"cmd": prompt.removeprefix("run ")})
            call_id = f"c{len(messages)}"
            yield {0: DeltaToolCall(name="run_shell_command", json_args=args, tool_call_id=call_id)}
            return
        yield f"You said: {prompt}"

    return fn


@pytest.mark.slow
async def test_approve_all_does_not_follow_into_a_resumed_session(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    app = make_app(echo_or_shell(), tmp_path, db)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_ready()
        await submit(pilot, app, "Plan the trip")
        (planned,) = SessionStore(db).list()
        app.run_command("/clear")
        await wait_for(pilot, lambda: not app.session.history)

        # A new session: approve everything there.
        app.chat.prompt.text = "run touch one.txt"
        await pilot.press("enter")
        await approval_dialog(pilot, app)
        await pilot.press("a", "a")
        await settle(pilot, app)
        assert (tmp_path / "one.txt").exists()
        assert app.session.deps.auto_confirm and app.chat.status_bar.status.approve_all

        # Back to the first session: approve-all stayed behind.
        app.run_command(f"/resume {planned.id}")
        await wait_for(pilot, lambda: user_texts(app) == ["Plan the trip"])
        assert not app.session.deps.auto_confirm
        assert not app.chat.status_bar.status.approve_all
        app.chat.prompt.text = "run touch two.txt"
        await pilot.press("enter")
        screen = await approval_dialog(pilot, app)  # asks again
        assert screen.request.args == {"cmd": "touch two.txt"}
        await pilot.press("n")
        await settle(pilot, app)
        assert not (tmp_path / "two.txt").exists()

        # And /resume of the session where it was chosen does not bring it back either.
        newest = next(i for i in SessionStore(db).list() if i.id != planned.id)
        app.run_command(f"/resume {newest.id}")
        await wait_for(pilot, lambda: user_texts(app) == ["run touch one.txt"])
        assert not app.session.deps.auto_confirm
