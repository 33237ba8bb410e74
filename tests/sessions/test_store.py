"""The SQLite session store: round trips, incremental writes, format versions, listing."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from co_tui.store import errors, records, schema
from co_tui.store.errors import SessionFormatError, SessionNotFound
from co_tui.store.recorder import SessionRecorder, open_session
from co_tui.store.records import title_from_prompt
from co_tui.store.schema import FORMAT_VERSION
from co_tui.store.session_store import SessionStore

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
# The layout co-tui wrote before schema 2 (no version, fork or journal, no compactions).
SCHEMA_1 = (
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', "
    "model TEXT NOT NULL DEFAULT '', cwd TEXT NOT NULL DEFAULT '', created REAL NOT NULL, "
    "updated REAL NOT NULL, format_version INTEGER NOT NULL, turns INTEGER NOT NULL "
    "DEFAULT 0, message_count INTEGER NOT NULL DEFAULT 0, pending BLOB, interrupted "
    "INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT "
    "NULL, data BLOB NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;"
    "PRAGMA user_version=1;"
)


def every_part_kind() -> list[ModelMessage]:
    return [
        ModelRequest(parts=[
            SystemPromptPart(content="be brief", timestamp=T0),
            UserPromptPart(content=[
                "look at these", ImageUrl(url="https://example.com/cat.png"),
                BinaryContent(data=b"\x00\x01binary", media_type="application/octet-stream"),
            ], timestamp=T0),
        ], instructions="the instructions"),
        ModelResponse(parts=[
            ThinkingPart(content="let me think", signature="sig"),
            TextPart(content="Here is a tool call"),
            ToolCallPart(tool_name="search", args={"q": "cats", "n": 3}, tool_call_id="c1"),
            ToolCallPart(tool_name="fetch", args='{"url": "x"}', tool_call_id="c2"),
        ], usage=RequestUsage(input_tokens=10, output_tokens=5), model_name="fn",
            timestamp=T0, finish_reason="tool_call"),
        ModelRequest(parts=[
            ToolReturnPart(tool_name="search", content={"display": "3 cats", "rows": [1, 2]},
                           tool_call_id="c1", timestamp=T0),
            ToolReturnPart(tool_name="fetch", content="url is invalid", tool_call_id="c2",
                           outcome="retried", timestamp=T0),
            RetryFeedbackPart(content="answer in JSON", retry=RetryInfo(cause="model_retry"),
                              timestamp=T0),
        ]),
        ModelResponse(parts=[TextPart(content="partial ans")], state="interrupted", timestamp=T0),
    ]  # fmt: skip


def turn(n: int) -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart(content=f"question {n}", timestamp=T0)]),
        ModelResponse(parts=[ToolCallPart(tool_name="t", args={"n": n}, tool_call_id=f"c{n}")],
                      timestamp=T0),
        ModelRequest(parts=[ToolReturnPart(tool_name="t", content="r" * 200, tool_call_id=f"c{n}",
                                           timestamp=T0)]),
        ModelResponse(parts=[TextPart(content=f"answer {n}")], timestamp=T0),
    ]  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    s = SessionStore(tmp_path / "sessions.db")
    yield s
    s.close()


def test_round_trip_of_every_part_kind(store: SessionStore, tmp_path: Path) -> None:
    messages = every_part_kind()
    store.save("s1", messages, title="t", model="fn", cwd=str(tmp_path))
    store.close()
    loaded = SessionStore(store.path).load("s1")  # a fresh process would do the same
    assert loaded.messages == messages
    assert loaded.info.interrupted  # the partial answer is marked
    assert loaded.messages[-1].state == "interrupted"
    assert loaded.info.message_count == 4 and loaded.info.format_version == FORMAT_VERSION


def test_pending_approvals_round_trip(store: SessionStore) -> None:
    call = ToolCallPart(tool_name="run_shell_command", args={"cmd": "rm x"}, tool_call_id="c9")
    pending = DeferredToolRequests(approvals=[call], metadata={"c9": {"why": "side effect"}})
    store.save("s1", turn(1)[:2], pending=pending)
    loaded = store.load("s1")
    assert loaded.info.has_pending and loaded.pending == pending
    # A frontend that will not ask gets the call answered as "not run".
    history = loaded.history_without_pending()
    assert isinstance(history[-1].parts[0], ToolReturnPart)
    assert "never given" in history[-1].parts[0].content
    store.save("s1", turn(1))
    assert store.load("s1").pending is None


def test_saves_write_only_what_changed(store: SessionStore) -> None:
    history: list[ModelMessage] = []
    written = []
    for n in range(30):
        history = [*history, *turn(n)]
        written.append(store.save("s1", history))
    # Four new messages a turn, plus at most the re-checked tail; never the whole history.
    assert written[0] == 4 and max(written[1:]) == 4
    # A message changed in place of an earlier one (a processor's trim) is rewritten too.
    trimmed = list(history)
    trimmed[2] = ModelRequest(parts=[ToolReturnPart(tool_name="t", content="r",
                                                    tool_call_id="c0", timestamp=T0)])  # fmt: skip
    assert store.save("s1", trimmed) == 1
    # A shorter history (a discarded attempt's partial answer) deletes the rows past its end.
    assert store.save("s1", trimmed[:8]) == 0
    assert store.load("s1").messages == trimmed[:8]
    # A store that has not seen the session compares with the stored rows.
    fresh = SessionStore(store.path)
    assert fresh.save("s1", [*trimmed[:8], *turn(99)]) == 4
    assert fresh.load("s1").messages == [*trimmed[:8], *turn(99)]
    fresh.close()


def test_list_search_latest_resolve_delete(store: SessionStore, tmp_path: Path) -> None:
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    store.save("aaaa-1", turn(1), title="Plan the trip", cwd=a)
    store.save("bbbb-2", turn(2), title="Fix 100% of the bugs", cwd=a)
    store.save("cccc-3", turn(3), title="Other place", cwd=b)
    assert [i.id for i in store.list(cwd=a)] == ["bbbb-2", "aaaa-1"]
    assert [i.id for i in store.list(search="trip")] == ["aaaa-1"]
    assert [i.id for i in store.list(search="100%")] == ["bbbb-2"]
    assert [i.id for i in store.list(search="cccc")] == ["cccc-3"]
    assert store.latest(b).id == "cccc-3"  # type: ignore[union-attr]
    assert store.resolve("bbbb").id == "bbbb-2"
    with pytest.raises(SessionNotFound):
        store.resolve("zzzz")
    store.delete("bbbb-2")
    assert [i.id for i in store.list(cwd=a)] == ["aaaa-1"]
    with pytest.raises(SessionNotFound):
        store.load("bbbb-2")
    assert store.integrity_check() == "ok"


def test_open_session_for_continue_and_resume(store: SessionStore, tmp_path: Path) -> None:
    assert open_session(store, tmp_path) is None
    with pytest.raises(SessionNotFound, match="no earlier session"):
        open_session(store, tmp_path, continue_latest=True)
    store.save("s1", turn(1), cwd=str(tmp_path.resolve()))
    store.save("s2", turn(2), cwd=str(tmp_path.resolve()))
    assert open_session(store, tmp_path, continue_latest=True).info.id == "s2"  # type: ignore[union-attr]
    assert open_session(store, tmp_path, resume="s1").messages == turn(1)  # type: ignore[union-attr]


def _set_format(path: Path, session_id: str, version: int) -> None:
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sessions SET format_version = ? WHERE id = ?", (version, session_id))


def test_a_newer_format_is_refused_and_kept(store: SessionStore) -> None:
    store.save("s1", turn(1))
    _set_format(store.path, "s1", FORMAT_VERSION + 1)
    with pytest.raises(SessionFormatError, match="newer co-tui"):
        SessionStore(store.path).load("s1")
    listed = store.list()
    assert [i.id for i in listed] == ["s1"] and not listed[0].readable  # still listed


def test_an_older_format_without_migration_is_refused(store: SessionStore) -> None:
    store.save("s1", turn(1))
    _set_format(store.path, "s1", 0)
    with pytest.raises(SessionFormatError, match=r"format 0.*cannot migrate"):
        store.load("s1")
    assert store.info("s1").message_count == 4  # nothing was dropped


def test_an_older_format_is_migrated_and_rewritten(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save("s1", turn(1))
    # Pretend format 2 renamed the answer text; format 1 rows are migrated on open.
    monkeypatch.setattr(schema, "FORMAT_VERSION", 2)
    monkeypatch.setitem(schema.MIGRATIONS, 1, lambda row: row.replace(b"answer 1", b"reply 1"))
    loaded = store.load("s1")
    assert loaded.messages[-1].parts[0].content == "reply 1"
    assert store.info("s1").format_version == 2
    assert store.load("s1").messages == loaded.messages  # rewritten: migrated once


def test_a_pydantic_ai_1x_retry_prompt_row_loads_as_the_2x_parts(store: SessionStore) -> None:
    store.save("s1", turn(1)[:2])
    legacy = (
        b'{"parts":[{"content":"bad args","tool_name":"t","tool_call_id":"c1",'
        b'"timestamp":"2026-01-02T03:04:05Z","part_kind":"retry-prompt"}],"kind":"request"}'
    )
    with sqlite3.connect(store.path) as db:
        db.execute("INSERT INTO messages VALUES ('s1', 2, 'request', ?)", (legacy,))
    part = SessionStore(store.path).load("s1").messages[2].parts[0]
    assert isinstance(part, ToolReturnPart) and part.outcome == "retried"
    assert (part.tool_call_id, part.content) == ("c1", "bad args")


def test_an_unreadable_message_names_itself(store: SessionStore) -> None:
    store.save("s1", turn(1))
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE messages SET data = ? WHERE seq = 2", (b'{"kind": "request"}',))
    with pytest.raises(SessionFormatError, match="message 2 cannot be read"):
        SessionStore(store.path).load("s1")


def test_a_database_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version=99")
    with pytest.raises(SessionFormatError, match="newer co-tui"):
        SessionStore(path).list()


def test_recorder_titles_counts_turns_and_starts_new_sessions(store: SessionStore) -> None:
    rec = SessionRecorder(store, model="fn", cwd="/somewhere")
    rec.begin_turn("\n  Plan a trip to Lisbon in May " + "x" * 100)
    rec.save(turn(1))
    info = store.info(rec.session_id)
    assert info.title == title_from_prompt("Plan a trip to Lisbon in May " + "x" * 100)
    assert len(info.title) == 80 and info.turns == 1 and info.model == "fn"
    assert info.cwd == str(Path("/somewhere").resolve())
    first = rec.session_id
    rec.start_new()
    rec.begin_turn("second session")
    rec.save(turn(2))
    assert rec.session_id != first and store.info(first).message_count == 4
    resumed = SessionRecorder.resume(store, store.load(first))
    assert (resumed.session_id, resumed.turns, resumed.title) == (first, 1, info.title)


@pytest.mark.e2e
def test_the_database_is_in_the_user_data_dir(isolated_env: Path) -> None:
    store = SessionStore()
    store.save("s1", turn(1))
    assert store.path == isolated_env / "data" / "co-tui" / "sessions.db"
    assert store.path.is_file()
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


# -- the tool-run journal: decided calls written ahead of their run -----------------------------


def paused_on(call_ids: list[str]) -> tuple[list[ModelMessage], DeferredToolRequests]:
    calls = [
        ToolCallPart(tool_name="run_shell_command", args={"cmd": f"echo {c}"}, tool_call_id=c)
        for c in call_ids
    ]
    messages: list[ModelMessage] = [
        *turn(0),
        ModelRequest(parts=[UserPromptPart(content="go")]),
        ModelResponse(parts=calls),
    ]
    return messages, DeferredToolRequests(approvals=calls)


PAUSED_AT = len(turn(0)) + 1  # paused_on's response: its position in the messages


def run(
    call_id: str, state: records.ToolRunState, decision: str = "approve", at: int = PAUSED_AT
) -> records.ToolRun:
    return records.ToolRun(
        call_id, "run_shell_command", {"cmd": f"echo {call_id}"}, decision, state, response_at=at
    )


def answers(messages: list[ModelMessage]) -> dict[str, str]:
    return {
        p.tool_call_id: str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }


def test_a_call_decided_but_never_finished_is_reported_and_never_asked_again(
    store: SessionStore,
) -> None:
    messages, pending = paused_on(["run1", "done1", "no1"])
    store.save("s1", messages, pending=pending)
    store.calls_started(
        "s1", [run("run1", "running"), run("done1", "running"), run("no1", "denied", "deny")]
    )
    store.call_finished("s1", PAUSED_AT, "done1", "exit code 0\ndone1")
    loaded = SessionStore(store.path).load("s1")
    assert loaded.pending is None and not loaded.info.has_pending  # nothing to ask again
    got = answers(loaded.messages)
    assert got["run1"] == records.UNFINISHED_CALL and "may have run" in got["run1"]
    assert got["done1"] == "exit code 0\ndone1"  # it finished: its real result is recovered
    assert got["no1"] == records.DENIED_BEFORE
    assert [r.tool_call_id for r in loaded.unfinished] == ["run1", "done1"]
    notice = loaded.unfinished_notice()
    assert notice is not None and "echo run1" in notice and "none was run again" in notice


def test_a_pause_nobody_answered_is_still_pending(store: SessionStore) -> None:
    messages, pending = paused_on(["c1"])
    store.save("s1", messages, pending=pending)
    loaded = SessionStore(store.path).load("s1")
    assert loaded.pending == pending and loaded.unfinished == []
    assert loaded.messages == messages  # the call stays open, to be asked again


def test_a_journal_argument_with_escape_codes_is_shown_visibly(store: SessionStore) -> None:
    cmd = "rm x\x1b[2J\x1b]0;hi\x07"
    call = ToolCallPart(tool_name="run_shell_command", args={"cmd": cmd}, tool_call_id="c1")
    store.save("s1", [*turn(0), ModelResponse(parts=[call])])
    store.calls_started(
        "s1",
        [records.ToolRun("c1", call.tool_name, {"cmd": cmd}, "approve", "running", response_at=4)],
    )
    notice = SessionStore(store.path).load("s1").unfinished_notice()
    assert notice is not None and "\x1b" not in notice and "\x07" not in notice


# -- two writers ---------------------------------------------------------------------------------


def test_a_second_writer_gets_a_conflict_and_writes_nothing(tmp_path: Path) -> None:
    first, second = SessionStore(tmp_path / "s.db"), SessionStore(tmp_path / "s.db")
    first.save("s1", turn(0))
    mine, theirs = first.load("s1"), second.load("s1")
    first.save("s1", [*mine.messages, *turn(1)])
    with pytest.raises(errors.SessionConflict, match=r"another co-tui \(pid \d+\) saved"):
        second.save("s1", [*theirs.messages, *turn(2)])
    assert SessionStore(tmp_path / "s.db").load("s1").messages == [*turn(0), *turn(1)]


def test_the_recorder_forks_on_a_conflict_and_loses_no_turn(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    SessionStore(db).save("s1", turn(0), title="shared", cwd=str(tmp_path), turns=1)
    a_store, b_store = SessionStore(db), SessionStore(db)
    a = SessionRecorder.resume(a_store, a_store.load("s1"))
    b = SessionRecorder.resume(b_store, b_store.load("s1"))
    a.begin_turn("from a")
    a.save([*turn(0), *turn(1)])
    b.begin_turn("from b")
    b.save([*turn(0), *turn(2)])
    assert a.session_id == "s1" and not a.forks
    assert b.session_id != "s1" and [f.source_id for f in b.forks] == ["s1"]
    assert "continues as session" in b.forks[0].message()
    check = SessionStore(db)
    assert check.load("s1").messages == [*turn(0), *turn(1)]
    fork = check.load(b.session_id)
    assert fork.messages == [*turn(0), *turn(2)] and fork.info.forked_from == "s1"
    assert fork.info.title == "shared" and fork.info.turns == 2
    # Later saves go on in the fork, without another conflict.
    b.save([*turn(0), *turn(2), *turn(3)])
    assert SessionStore(db).load(b.session_id).messages[-4:] == turn(3)


def test_a_save_that_changes_nothing_keeps_the_sessions_order(store: SessionStore) -> None:
    store.save("older", turn(0))
    store.save("newer", turn(1))
    assert store.save("older", turn(0)) == 0
    assert [i.id for i in store.list()] == ["newer", "older"]


def test_a_schema_1_database_is_upgraded_in_place(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.executescript(SCHEMA_1)
    rows = [("old", seq, m.kind, records.encode_message(m)) for seq, m in enumerate(turn(0))]
    conn.execute(
        "INSERT INTO sessions (id, title, created, updated, format_version, turns, "
        "message_count) VALUES ('old', 'from v1', 1, 1, 1, 1, 4)"
    )
    conn.executemany("INSERT INTO messages VALUES (?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    store = SessionStore(db)
    loaded = store.load("old")
    assert loaded.messages == turn(0) and loaded.info.title == "from v1"
    store.save("old", [*turn(0), *turn(1)])
    assert SessionStore(db).load("old").messages == [*turn(0), *turn(1)]


def test_a_reused_call_id_never_borrows_another_calls_record(store: SessionStore) -> None:
    """A model that reuses an earlier call's id cannot make a new, unfinished call look as
    if it had run and returned the earlier call's result."""
    messages, pending = paused_on(["c1"])
    store.save("s1", messages, pending=pending)
    store.calls_started("s1", [run("c1", "running")])
    store.call_finished("s1", PAUSED_AT, "c1", "the first call's result")
    answered = [
        *messages,
        ModelRequest(
            parts=[
                ToolReturnPart(
                    tool_name="run_shell_command",
                    content="the first call's result",
                    tool_call_id="c1",
                )
            ]
        ),
    ]
    reused = ToolCallPart(
        tool_name="run_shell_command", args={"cmd": "rm -rf x"}, tool_call_id="c1"
    )
    store.save("s1", [*answered, ModelResponse(parts=[reused])])
    loaded = SessionStore(store.path).load("s1")
    assert answers(loaded.messages[-1:])["c1"] == records.NO_RECORD
    assert loaded.unfinished == []


def test_deleting_a_session_deletes_its_draft_and_only_its_own(tmp_path: Path) -> None:
    from co_tui.store.drafts import Draft, DraftStore

    store = SessionStore(tmp_path / "sessions.db")
    drafts = DraftStore(tmp_path)
    for sid in ("aaaa-1", "bbbb-2"):
        store.save(sid, turn(1), cwd=str(tmp_path))
        drafts.save(sid, Draft("unsent words"), tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    store.save("cccc-3", turn(1), cwd=str(tmp_path))
    drafts.path("cccc-3").symlink_to(victim)  # a link planted at a draft's name

    store.delete("aaaa-1")
    store.delete("cccc-3")
    assert not drafts.path("aaaa-1").exists()
    assert drafts.path("bbbb-2").is_file()
    assert not drafts.path("cccc-3").is_symlink() and victim.read_text() == "keep me"
    store.delete("never-stored")  # nothing to delete is no error
    store.close()


def test_no_data_folder_means_no_draft_to_delete(tmp_path: Path) -> None:
    """A file where the data folder should be: a new session's draft is not there to delete,
    and saying "cannot delete the draft" at start-up would only confuse."""
    from co_tui.store.drafts import DraftError, DraftStore

    (tmp_path / "data-file").write_text("not a folder")
    DraftStore(tmp_path / "data-file" / "co-tui").discard("aaaa-1")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "drafts").symlink_to(tmp_path)  # a link planted at the folder
    with pytest.raises(DraftError, match="symbolic link"):
        DraftStore(tmp_path / "data").discard("aaaa-1")
