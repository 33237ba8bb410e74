"""An aborted turn's error is stored with the session and comes back where it was shown."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.protocol import events as ev
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.store.schema import SCHEMA_VERSION
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from co_tui.tui.widgets.items import Note
from co_tui.turn.replay import replay
from tests.helpers import user_prompts
from tests.tui.helpers import SIZE, settle


def failing_second_prompt() -> Any:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        prompts = user_prompts(messages)
        if prompts[-1] == "break":
            raise RuntimeError("the disk caught fire")
        yield f"answer to {prompts[-1]}"

    return fn


def make_app(workspace: Path, db: Path, **kw: Any) -> CoApp:
    settings = Settings(theme="textual-dark")
    model = FunctionModel(stream_function=failing_second_prompt(), model_name="fn")
    bundle = build_agent(settings, model=model, instructions="test")
    choice = SandboxChoice(SubprocessSandbox(workspace), "test sandbox")
    deps = create_deps(settings, workspace, sandbox_choice=choice)
    store = SessionStore(db)
    return CoApp(settings, bundle=bundle, deps=deps, history_path=None, session_store=store, **kw)


async def submit(pilot: Any, app: CoApp, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")
    await settle(pilot, app)


def errors(app: CoApp) -> list[str]:
    """The error lines of the transcript, as shown."""
    items = app.chat.transcript.items
    return [str(w._source) for w in items if isinstance(w, Note) and "note-error" in w.classes]


async def test_an_aborted_turns_error_comes_back_in_place_after_continue(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    first = make_app(tmp_path, db)
    async with first.run_test(size=SIZE) as pilot:
        await first.wait_ready()
        await submit(pilot, first, "hello")
        await submit(pilot, first, "break")
        await submit(pilot, first, "after")
        live = errors(first)
        first.exit()
    assert len(live) == 1 and "the disk caught fire" in live[0]

    second = make_app(tmp_path, db, continue_latest=True)
    async with second.run_test(size=SIZE) as pilot:
        await second.wait_ready()
        await settle(pilot, second)
        assert errors(second) == live
        items = second.chat.transcript.items
        kinds = ["error" if "note-error" in w.classes else type(w).__name__ for w in items]
        error_at = kinds.index("error")
        assert kinds[:error_at].count("UserMessage") == 2  # after "break", before "after"
        assert kinds[error_at:].count("UserMessage") == 1


def test_replay_puts_each_note_inside_the_turn_it_ended() -> None:
    from co_tui.store.records import Note as StoredNote

    stored = StoredNote(position=0, message="provider said no")
    events = list(replay([], "s", notes=[stored]))
    assert events == [ev.Error(session_id="s", message="provider said no")]


def test_a_schema_2_database_is_upgraded_in_place_with_notes(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    store = SessionStore(db)
    store.save("a" * 32, [], title="t", model="m", cwd=str(tmp_path), turns=0)
    store.close()
    with sqlite3.connect(db) as conn:  # as schema 2 left it: no notes table, no headless
        conn.execute("DROP TABLE notes")
        conn.execute("ALTER TABLE sessions DROP COLUMN headless")
        conn.execute("PRAGMA user_version=2")
    store = SessionStore(db)
    assert store.load("a" * 32).notes == []  # read as current without changing the file
    from co_tui.store.records import Note as StoredNote

    store.add_note("a" * 32, StoredNote(1, "boom"))
    assert store.load("a" * 32).notes == [StoredNote(1, "boom")]
    store.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_secret_in_an_error_never_reaches_the_file(tmp_path: Path) -> None:
    """A provider error can echo the request (an API key in a URL or a header)."""
    from co_tui.store.records import Note as StoredNote

    key = "sk-live-0123456789abcdefghijklmnop"
    db = tmp_path / "sessions.db"
    store = SessionStore(db, secrets=[key])
    store.save("b" * 32, [], title="t", model="m", cwd=str(tmp_path), turns=0)
    store.add_note("b" * 32, StoredNote(0, f"401 from https://llm.example/v1?key={key}"))
    [note] = store.load("b" * 32).notes
    store.close()
    assert key not in note.message and "401 from" in note.message
    assert key.encode() not in db.read_bytes()
