"""`co-tui -p` sessions are marked: the app's /resume list leaves them out, `co-tui -p
--continue` still takes the latest one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import FunctionModel

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.session.chat import ChatSession
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from co_tui.tui.screens.sessions import SessionsScreen
from tests.tui.helpers import SIZE, text_stream, wait_until

APP_ID = "a" * 32
HEADLESS_ID = "b" * 32


def exchange(prompt: str) -> list[Any]:
    return [
        ModelRequest(parts=[UserPromptPart(content=prompt)]),
        ModelResponse(parts=[TextPart(content=f"answer to {prompt}")]),
    ]


def stored(db: Path, cwd: Path) -> None:
    store = SessionStore(db)
    where = str(cwd.resolve())
    store.save(APP_ID, exchange("plan the week"), title="plan the week", cwd=where, turns=1)
    store.save(HEADLESS_ID, exchange("hi"), title="hi", cwd=where, turns=1, headless=True)
    store.close()


def make_app(workspace: Path, db: Path, **kw: Any) -> CoApp:
    settings = Settings(theme="textual-dark")
    model = FunctionModel(stream_function=text_stream("ok"), model_name="fn")
    bundle = build_agent(settings, model=model, instructions="test")
    choice = SandboxChoice(SubprocessSandbox(workspace), "test sandbox")
    deps = create_deps(settings, workspace, sandbox_choice=choice)
    store = SessionStore(db)
    return CoApp(settings, bundle=bundle, deps=deps, history_path=None, session_store=store, **kw)


async def test_the_apps_list_leaves_p_sessions_out(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    stored(db, tmp_path)
    app = make_app(tmp_path, db)
    async with app.run_test(size=SIZE) as pilot:
        await app.wait_ready()
        app.run_command("/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), "the list")
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await wait_until(pilot, lambda: screen.table.row_count > 0, "rows")
        await pilot.pause()
        assert [info.id for info in screen.sessions] == [APP_ID]


def test_p_continue_takes_the_latest_session_headless_included(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    stored(db, tmp_path)
    session = ChatSession(Settings(), workspace=tmp_path, store=SessionStore(db), headless=True)
    loaded = session.open_stored(continue_latest=True, ask_pending=False)
    assert loaded is not None and loaded.info.id == HEADLESS_ID and loaded.info.headless


def test_a_p_session_continued_in_the_app_becomes_an_ordinary_one(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    stored(db, tmp_path)
    store = SessionStore(db)
    loaded = store.load(HEADLESS_ID)
    store.save(HEADLESS_ID, [*loaded.messages, *exchange("more")], turns=2)
    assert not store.info(HEADLESS_ID).headless
    assert [i.id for i in store.list(include_headless=False)] == [HEADLESS_ID, APP_ID]
