"""A damaged, locked, read-only or unreachable `sessions.db`: one line naming the file and
what to do, reading without writing, and `co-tui sessions --move-aside` (real co-tui
processes, real SQLite files; see tests/file_access.py for the other-user cases)."""

from __future__ import annotations

import os
import re
import select
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from co_tui.store.errors import SessionDatabaseLocked
from co_tui.store.records import encode_message
from co_tui.store.session_store import SessionStore
from tests.cli_in_process import Ran, run_co_tui
from tests.file_access import give_away, restricted
from tests.servers.fake_openai import serve, text
from tests.sessions.test_cli_sessions import CLI, db_path, env_for
from tests.sessions.test_store import SCHEMA_1

MOVE_ASIDE = "co-tui sessions --move-aside"
BACKUP = re.compile(r"sessions\.db\.corrupt-\d{8}-\d{6}$")

_HOLDER = """
import sqlite3, sys
path, sql = sys.argv[1], sys.argv[2]
if sql:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(sql)
else:
    held = open(path, "rb")
print("holding", flush=True)
sys.stdin.read()
"""


def run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, *, as_other: bool = False
) -> subprocess.CompletedProcess[str] | Ran:
    """`co-tui ARGS`: in this process (tests/cli_in_process.py), or as another user's process."""
    if not as_other:
        return run_co_tui(args, cwd, env or dict(os.environ))
    return subprocess.run(
        restricted([*CLI, *args]),
        cwd=cwd,
        env=env or dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line_error(proc: subprocess.CompletedProcess[str] | Ran, *parts: str) -> str:
    """The co-tui line of stderr that holds every part; no traceback anywhere."""
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if all(p in ln for p in parts)]
    assert lines, proc.stderr
    return lines[0]


def a_session(db: Path, cwd: Path, prompt: str = "My name is Ada") -> None:
    messages = [
        ModelRequest(parts=[UserPromptPart(content=prompt)]),
        ModelResponse(parts=[TextPart(content="Nice to meet you, Ada.")]),
    ]
    store = SessionStore(db)
    store.save("5e551015-0000-4000-8000-000000000001", messages, title=prompt, cwd=str(cwd))
    store.close()


def snapshot(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry of `folder` (and the folder itself): mode, owner, contents."""
    entries = {".": (folder.stat().st_mode, folder.stat().st_uid, b"")}
    for path in folder.iterdir():
        st = path.stat()
        entries[path.name] = (st.st_mode, st.st_uid, path.read_bytes())
    return entries


@contextmanager
def holding(path: Path, sql: str = "") -> Iterator[subprocess.Popen[str]]:
    """A python process that has `path` open (`sql` run on it, e.g. BEGIN EXCLUSIVE) until
    the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), sql],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready and proc.stdout.readline() == "holding\n", "the holder never took hold"
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=30)


def not_a_database(db: Path) -> bytes:
    return os.urandom(8192)


def malformed(db: Path) -> bytes:
    """A real session database whose first page (the schema) was overwritten."""
    a_session(db, db.parent)
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xa5" * 3996
    return bytes(data)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.mark.e2e
@pytest.mark.parametrize("damage", [not_a_database, malformed])
def test_a_damaged_database_is_named_kept_and_moved_aside_only_when_asked(
    damage, workspace: Path, isolated_env: Path
) -> None:
    db = db_path(isolated_env)
    db.parent.mkdir(parents=True, mode=0o700)
    garbage = damage(db)
    for suffix in ("", "-wal"):
        Path(f"{db}{suffix}").write_bytes(garbage)
        os.chmod(f"{db}{suffix}", 0o600)

    listed = run(["sessions"], workspace)
    assert listed.returncode == 1
    line = one_line_error(listed, str(db), MOVE_ASIDE)
    assert "cannot be read" in line and "sessions.db.corrupt-YYYYMMDD-HHMMSS" in line
    with serve([text("Hello."), text("Hello again.")]) as srv:
        env = env_for(srv.url)
        resumed = run(["-p", "hi", "--continue"], workspace, env)
        assert resumed.returncode == 1 and not srv.requests  # refused before the model
        one_line_error(resumed, str(db), MOVE_ASIDE)
        answered = run(["-p", "hi"], workspace, env)  # the answer comes; it is not saved
        assert answered.stdout == "Hello.\n"
        one_line_error(answered, "could not save the session", str(db), MOVE_ASIDE)
    assert db.read_bytes() == garbage and Path(f"{db}-wal").read_bytes() == garbage

    moved = run(["sessions", "--move-aside"], workspace)
    assert moved.returncode == 0, moved.stderr
    backups = [p for p in db.parent.iterdir() if BACKUP.search(p.name)]
    assert len(backups) == 1 and backups[0].read_bytes() == garbage
    assert Path(f"{backups[0]}-wal").read_bytes() == garbage
    assert str(backups[0]) in moved.stdout and not db.exists()

    with serve([text("A fresh start.")]) as srv:
        fresh = run(["-p", "start over"], workspace, env_for(srv.url))
    assert fresh.returncode == 0, fresh.stderr
    assert "start over" in run(["sessions", "--all"], workspace).stdout  # a -p run


@pytest.mark.e2e
def test_move_aside_refuses_a_readable_database(workspace: Path, isolated_env: Path) -> None:
    db = db_path(isolated_env)
    a_session(db, workspace)
    before = db.read_bytes()
    proc = run(["sessions", "--move-aside"], workspace)
    assert proc.returncode == 1
    assert "can be read" in one_line_error(proc, str(db), "nothing was moved")
    assert db.read_bytes() == before
    assert not [p for p in db.parent.iterdir() if "corrupt" in p.name]
    assert "My name is Ada" in run(["sessions"], workspace).stdout


@pytest.mark.e2e
def test_move_aside_refuses_while_another_process_has_the_file_open(
    workspace: Path, isolated_env: Path
) -> None:
    db = db_path(isolated_env)
    db.parent.mkdir(parents=True, mode=0o700)
    db.write_bytes(b"not a database at all " * 100)
    with holding(db) as holder:
        proc = run(["sessions", "--move-aside"], workspace)
    assert proc.returncode == 1
    one_line_error(proc, str(db), f"pid {holder.pid}", "nothing was moved")
    assert db.exists() and not [p for p in db.parent.iterdir() if "corrupt" in p.name]


@pytest.mark.e2e
def test_a_locked_database_names_the_process_that_holds_it(
    workspace: Path, isolated_env: Path
) -> None:
    db = db_path(isolated_env)
    a_session(db, workspace)
    store = SessionStore(db, timeout=0.2)
    with holding(db, "BEGIN EXCLUSIVE") as holder:
        assert [s.title for s in store.list()] == ["My name is Ada"]  # WAL: reading goes on
        with pytest.raises(SessionDatabaseLocked) as info:
            store.save("another", [ModelRequest(parts=[UserPromptPart(content="hi")])])
    message = str(info.value)
    assert message.startswith(f"{db} is locked: still busy after 0.2 s")
    assert f"pid {holder.pid} (" in message and "python" in message and "\n" not in message
    store.save("another", [ModelRequest(parts=[UserPromptPart(content="hi")])])  # released
    assert len(store.list()) == 2


@pytest.mark.e2e
@pytest.mark.parametrize("open_elsewhere", [False, True], ids=["closed", "open-elsewhere"])
def test_a_read_only_database_lists_and_resumes_but_does_not_save(
    workspace: Path, isolated_env: Path, open_elsewhere: bool
) -> None:
    """Someone else's 0644 database in their 0755 folder: reading works without creating
    anything (closed: no -wal/-shm, read as immutable; open elsewhere: through its -shm)."""
    db = db_path(isolated_env)
    a_session(db, workspace)
    other = sqlite3.connect(db) if open_elsewhere else None
    if other is not None:
        other.execute("SELECT COUNT(*) FROM sessions").fetchone()  # its -wal and -shm exist
    try:
        for path in sorted(db.parent.iterdir()):
            give_away(path, 0o644)
        give_away(db.parent, 0o755)
        before = snapshot(db.parent)

        listed = run(["sessions"], workspace, as_other=True)
        assert listed.returncode == 0, listed.stderr
        assert "My name is Ada" in listed.stdout
        with serve([text("You are Ada.")]) as srv:
            proc = run(
                ["-p", "Who am I?", "--continue"], workspace, env_for(srv.url), as_other=True
            )
            sent = [m.get("content") for m in srv.requests[0].body["messages"]]
        assert proc.stdout == "You are Ada.\n"
        assert sent[-3:] == ["My name is Ada", "Nice to meet you, Ada.", "Who am I?"]
        line = one_line_error(proc, "could not save the session", str(db))
        assert "is read-only for this user" in line and "listed and resumed" in line
        assert snapshot(db.parent) == before
    finally:
        if other is not None:
            other.close()


@pytest.mark.e2e
def test_a_database_nobody_may_read_is_named(workspace: Path, isolated_env: Path) -> None:
    db = db_path(isolated_env)
    a_session(db, workspace)
    give_away(db, 0o600)
    give_away(db.parent, 0o755)
    proc = run(["sessions"], workspace, as_other=True)
    assert proc.returncode == 1
    assert "(owned by " in one_line_error(proc, str(db), "cannot be read by this user")


@pytest.mark.e2e
def test_a_data_folder_that_cannot_be_created_is_named(workspace: Path, tmp_path: Path) -> None:
    data = tmp_path / "someone-elses"
    data.mkdir()
    give_away(data, 0o755)
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    listed = run(["sessions"], workspace, env, as_other=True)
    assert listed.returncode == 0 and listed.stdout.startswith("no sessions"), listed.stderr
    with serve([text("Hello.")]) as srv:
        proc = run(["-p", "hi"], workspace, {**env_for(srv.url), **env}, as_other=True)
    assert proc.stdout == "Hello.\n"
    line = one_line_error(proc, "could not save the session", f"cannot create {data}/co-tui/")
    assert f"the folder {data} (owned by" in line and "XDG_DATA_HOME" in line
    assert list(data.iterdir()) == []


@pytest.mark.e2e
def test_a_file_where_the_data_folder_should_be_is_named(workspace: Path, tmp_path: Path) -> None:
    data = tmp_path / "data-file"
    data.write_text("not a folder")
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    listed = run(["sessions"], workspace, env)
    assert listed.returncode == 0 and listed.stdout.startswith("no sessions"), listed.stderr
    with serve([text("Hello.")]) as srv:
        proc = run(["-p", "hi"], workspace, {**env_for(srv.url), **env})
    assert proc.stdout == "Hello.\n"
    one_line_error(proc, "could not save the session", f"{data} is a file where a folder should be")
    # Telemetry's database cannot be made either: said once, in one line, no Python warning.
    told = [line for line in proc.stderr.splitlines() if "telemetry is off" in line]
    assert len(told) == 1 and "Not a directory" in told[0], proc.stderr
    assert "Warning" not in proc.stderr and "setup_telemetry" not in proc.stderr
    assert data.read_text() == "not a folder"


@pytest.mark.e2e
def test_listing_an_absent_database_creates_nothing(workspace: Path, isolated_env: Path) -> None:
    proc = run(["sessions", "--all"], workspace)
    assert proc.returncode == 0 and proc.stdout == "no sessions\n", proc.stderr
    assert not (isolated_env / "data").exists()


def test_a_schema_1_database_is_read_as_it_is(tmp_path: Path) -> None:
    """A read-only reader of the old layout (no version/forked_from/writer_pid columns, no
    compactions or tool_runs tables) lists and loads it and leaves the file as it was."""
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        SCHEMA_1 + "INSERT INTO sessions (id, title, created, updated, format_version, turns, "
        "message_count) VALUES ('old', 'from v1', 1, 1, 1, 1, 1);"
    )
    request = ModelRequest(parts=[UserPromptPart(content="hello")])
    conn.execute("INSERT INTO messages VALUES ('old', 0, 'request', ?)", (encode_message(request),))
    conn.commit()
    conn.close()
    before = db.read_bytes()
    store = SessionStore(db)
    assert [(s.id, s.forked_from) for s in store.list()] == [("old", None)]
    assert store.load("old").messages == [request]
    store.close()
    assert db.read_bytes() == before
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == 1
