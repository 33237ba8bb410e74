"""A draft is never lost: what the prompt holds and has not sent is kept in a private file
per session (redacted, never through a link), gone once sent, and back in the prompt when
the session is resumed (tests/test_draft_pty.py kills the real app with SIGKILL)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui.agent.build import build_agent
from co_tui.config.paths import user_data_dir
from co_tui.config.settings import Settings
from co_tui.context.deps import create_deps
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.store.drafts import Draft, DraftStore, Pasted
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from co_tui.tui.screens.chat import DRAFT_SAVE_S
from co_tui.tui.widgets.items import Note
from tests.tui.helpers import SIZE, settle, wait_until

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"


async def answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield "noted"


def make_app(workspace: Path, db: Path, **kw: Any) -> CoApp:
    settings = Settings(theme="textual-dark")
    bundle = build_agent(settings, model=FunctionModel(stream_function=answer), instructions="t")
    choice = SandboxChoice(SubprocessSandbox(workspace), "test sandbox")
    deps = create_deps(settings, workspace, sandbox_choice=choice)
    return CoApp(
        settings, bundle=bundle, deps=deps, history_path=None, session_store=SessionStore(db), **kw
    )


def draft_path(app: CoApp) -> Path:
    return user_data_dir() / "drafts" / f"{app.session_id}.json"


def kept(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


async def type_text(pilot: Any, text: str) -> None:
    await pilot.press(*["space" if c == " " else c for c in text])


async def test_a_draft_is_kept_privately_while_typed_and_gone_once_sent(tmp_path: Path) -> None:
    app = make_app(tmp_path, tmp_path / "s.db")
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        path = draft_path(app)
        await type_text(pilot, "half a thought")
        await wait_until(
            pilot,
            lambda: path.exists() and kept(path)["text"] == "half a thought",
            "the draft file",
            timeout=DRAFT_SAVE_S * 20,
        )
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        await pilot.press("enter")
        await settle(pilot, app)
        assert not path.exists()  # sent: a crash now must not bring it back


async def test_a_secret_in_the_draft_is_redacted_on_disk(tmp_path: Path) -> None:
    app = make_app(tmp_path, tmp_path / "s.db")
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        app.chat.prompt.text = f"my key is {SECRET} keep it"
        await wait_until(pilot, draft_path(app).exists, "the draft file")
        raw = draft_path(app).read_text(encoding="utf-8")
        assert SECRET not in raw
        assert kept(draft_path(app))["text"] == "my key is [REDACTED] keep it"
        assert app.chat.prompt.text == f"my key is {SECRET} keep it"  # the prompt keeps it


async def test_a_link_at_the_draft_path_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    app = make_app(tmp_path, tmp_path / "s.db")
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        path = draft_path(app)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.symlink_to(target)
        app.chat.prompt.text = "written through a link?"
        await wait_until(pilot, lambda: not path.is_symlink(), "the link to be replaced")
        assert target.read_text() == "precious\n"  # never written through
        assert kept(path)["text"] == "written through a link?"
        app.chat.prompt.text = ""  # emptied: the draft goes, the link's target stays
        await wait_until(pilot, lambda: not path.exists(), "the draft to go")
        assert target.read_text() == "precious\n"


async def test_a_linked_drafts_folder_keeps_nothing_and_says_so(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = user_data_dir() / "drafts"
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.symlink_to(elsewhere)
    app = make_app(tmp_path, tmp_path / "s.db")
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        app.chat.prompt.text = "where does this go?"
        await wait_until(
            pilot,
            lambda: any("links are not followed" in str(n.message) for n in app._notifications),
            "the warning that the draft is not kept",
        )
        assert list(elsewhere.iterdir()) == []
        assert app.chat.prompt.text == "where does this go?"  # nothing is lost from the prompt


async def stored_session(workspace: Path, db: Path, sent: str, unsent: str = "") -> str:
    """A session with `sent` sent and stored (and `unsent` left in the prompt): its id."""
    app = make_app(workspace, db)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        app.chat.prompt.text = sent
        await pilot.press("enter")
        await settle(pilot, app)
        if unsent:
            app.chat.prompt.text = unsent
        return app.session_id


async def test_a_link_planted_as_a_kept_draft_is_not_read(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    session_id = await stored_session(tmp_path, db, "stored")
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    planted = user_data_dir() / "drafts" / f"{session_id}.json"
    planted.parent.mkdir(mode=0o700, exist_ok=True)
    planted.symlink_to(secret)
    second = make_app(tmp_path, db, continue_latest=True)
    async with second.run_test(size=SIZE) as pilot:
        assert await second.wait_ready()
        await settle(pilot, second)
        assert second.session_id == session_id
        assert "PRIVATE KEY" not in second.chat.prompt.text
        notes = [str(n._source) for n in second.chat.transcript.items if isinstance(n, Note)]
        assert any("symbolic link" in n for n in notes), notes


async def test_resuming_a_session_brings_its_draft_back(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    session_id = await stored_session(
        tmp_path, db, "first question", unsent="the second question, unsent"
    )
    # What a crash leaves: the file, written by a process that is gone.
    store = DraftStore(user_data_dir())
    pasted = Pasted("[Pasted text #3 +12 lines]", "\n".join(f"log {n}" for n in range(12)))
    kept_draft = Draft(f"why? {pasted.label}", (pasted,), ("queued behind a turn",))
    store.save(session_id, kept_draft, tmp_path)
    _written_by_a_dead_process(store.path(session_id))

    second = make_app(tmp_path, db, continue_latest=True)
    async with second.run_test(size=SIZE) as pilot:
        assert await second.wait_ready()
        prompt = second.chat.prompt
        await wait_until(pilot, lambda: "why?" in prompt.text, "the draft in the prompt")
        assert prompt.text == f"queued behind a turn\nwhy? {pasted.label}"
        assert prompt.expanded(prompt.text).endswith("log 11")  # the paste came back too
        await pilot.press("enter")
        await settle(pilot, second)
        assert not store.path(session_id).exists()


async def test_keys_typed_while_the_app_starts_never_replace_the_kept_draft(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    session_id = await stored_session(tmp_path, db, "stored")
    store = DraftStore(user_data_dir())
    store.save(session_id, Draft("the kept draft"), tmp_path)
    _written_by_a_dead_process(store.path(session_id))
    second = make_app(tmp_path, db, continue_latest=True)
    async with second.run_test(size=SIZE) as pilot:
        await pilot.press("n", "e", "w")  # before the session is opened
        assert await second.wait_ready()
        await wait_until(pilot, lambda: "kept" in second.chat.prompt.text, "the kept draft")
        assert second.chat.prompt.text == "the kept draft\nnew"
        await wait_until(
            pilot, lambda: kept(store.path(session_id))["text"].endswith("new"), "save"
        )
        assert kept(store.path(session_id))["text"] == "the kept draft\nnew"


async def test_a_new_session_takes_the_draft_of_one_never_stored(tmp_path: Path) -> None:
    store = DraftStore(user_data_dir())
    store.save("99999999-0000-0000-0000-000000000000", Draft("typed, never sent"), tmp_path)
    _written_by_a_dead_process(store.path("99999999-0000-0000-0000-000000000000"))
    store.save("88888888-0000-0000-0000-000000000000", Draft("another folder's"), Path("/x"))
    app = make_app(tmp_path, tmp_path / "s.db")
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await wait_until(pilot, lambda: app.chat.prompt.text == "typed, never sent", "the draft")
        await wait_until(pilot, draft_path(app).exists, "the draft kept under this session")
        assert not store.path("99999999-0000-0000-0000-000000000000").exists()
        assert store.path("88888888-0000-0000-0000-000000000000").exists()


def _written_by_a_dead_process(path: Path) -> None:
    """Make the file look left by a process that ended (pid 2**22 + 1 is above pid_max)."""
    record = json.loads(path.read_text(encoding="utf-8"))
    record["pid"] = 2**22 + 1
    path.write_text(json.dumps(record), encoding="utf-8")
    os.chmod(path, 0o600)
