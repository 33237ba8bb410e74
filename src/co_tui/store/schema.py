"""The session database's layout: its tables and indexes, the version of the layout and of a
message row's encoding, and bringing an older layout up to date when it is opened.

- A session row: id, title (the first prompt), model, working directory, created, updated,
  format version, turns, message count, the approvals it is waiting for, interrupted flag,
  its write version, the session it was forked from, whether `co-tui -p` wrote it.
- A tool run (the journal, written ahead of a call's run) is keyed by what co-tui assigns:
  the position of the response that made the call in the session's messages, then the
  call's id (a provider may reuse ids: `call_0` in every turn). Rows written before schema
  4 have position -1 (`UNKNOWN_POSITION`): matched by id, name and arguments.
- `FORMAT_VERSION` is the encoding of a message row; `MIGRATIONS` turn an older encoding
  into the current one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from co_tui.config.paths import user_data_dir
from co_tui.store.errors import SessionFormatError

DB_NAME = "sessions.db"


BUSY_TIMEOUT_S = 10.0  # how long a write waits for another process's lock


SCHEMA_VERSION = 4  # PRAGMA user_version: the table layout


FORMAT_VERSION = 1  # the encoding of one message row (pydantic-ai 2.x message JSON)


# Migrations of one message's JSON from format n to n + 1 (none needed yet).
MIGRATIONS: dict[int, Callable[[bytes], bytes]] = {}


SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    cwd TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    updated REAL NOT NULL,
    format_version INTEGER NOT NULL,
    turns INTEGER NOT NULL DEFAULT 0,
    message_count INTEGER NOT NULL DEFAULT 0,
    pending BLOB,
    interrupted INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 0,
    forked_from TEXT,
    writer_pid INTEGER,
    headless INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, updated);
CREATE INDEX IF NOT EXISTS sessions_by_updated ON sessions (updated);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS compactions (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    upto INTEGER NOT NULL,
    kind TEXT NOT NULL,
    trim_through INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notes (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    position INTEGER NOT NULL,
    level TEXT NOT NULL,
    message TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tool_runs (
    session_id TEXT NOT NULL,
    response_at INTEGER NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    args BLOB NOT NULL,
    decision TEXT NOT NULL,
    state TEXT NOT NULL,
    result BLOB,
    started REAL NOT NULL,
    finished REAL,
    PRIMARY KEY (session_id, response_at, tool_call_id)
) WITHOUT ROWID;
"""


UNKNOWN_POSITION = -1  # a tool run written before schema 4: its response's position is unknown

_TOOL_RUN_COLUMNS = "tool_call_id, tool_name, args, decision, state, result, started, finished"


def upgrade_tool_runs(conn: sqlite3.Connection) -> None:
    """Schema 4 keys a tool run by its response's position too: an older table is copied
    into the new layout (position unknown), in the caller's transaction."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(tool_runs)")}
    if "response_at" in have:
        return
    conn.execute("ALTER TABLE tool_runs RENAME TO tool_runs_before_4")
    conn.execute(_tool_runs_table())
    conn.execute(
        f"INSERT INTO tool_runs (session_id, response_at, {_TOOL_RUN_COLUMNS}) "
        f"SELECT session_id, {UNKNOWN_POSITION}, {_TOOL_RUN_COLUMNS} FROM tool_runs_before_4"
    )
    conn.execute("DROP TABLE tool_runs_before_4")


def _tool_runs_table() -> str:
    start = SCHEMA.index("CREATE TABLE IF NOT EXISTS tool_runs")
    return SCHEMA[start : SCHEMA.index(";", start)]


# Columns later schemas added to the sessions table (2: version to writer_pid; 3: headless).
ADDED_COLUMNS = (
    ("version", "INTEGER NOT NULL DEFAULT 0"),
    ("forked_from", "TEXT"),
    ("writer_pid", "INTEGER"),
    ("headless", "INTEGER NOT NULL DEFAULT 0"),
)


def default_db_path() -> Path:
    return user_data_dir() / DB_NAME


def schema_version(conn: sqlite3.Connection, path: Path) -> int:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        conn.close()
        raise SessionFormatError(
            f"{path} was written by a newer co-tui (schema {version}; this one "
            f"knows {SCHEMA_VERSION}). Upgrade co-tui to use its sessions."
        )
    return version


def read_as_current(conn: sqlite3.Connection) -> None:
    """A read-only connection to an older layout reads it as the current one: the tables and
    columns it lacks are temporary objects of this connection (empty tables, a view with the
    columns' defaults), found before the file's own. The file is not changed."""
    tables = {r[0] for r in conn.execute("SELECT name FROM main.sqlite_master WHERE type='table'")}
    for statement in SCHEMA.split(";"):
        words = statement.split()
        if words[:2] == ["CREATE", "TABLE"] and words[5] not in tables:
            conn.execute(statement.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
    if "tool_runs" in tables:
        have = {row[1] for row in conn.execute("PRAGMA main.table_info(tool_runs)")}
        if "response_at" not in have:
            conn.execute(
                f"CREATE TEMP VIEW tool_runs AS SELECT session_id, {UNKNOWN_POSITION} AS "
                f"response_at, {_TOOL_RUN_COLUMNS} FROM main.tool_runs"
            )
    if "sessions" in tables:
        have = {row[1] for row in conn.execute("PRAGMA main.table_info(sessions)")}
        added = [
            f"{kind.split('DEFAULT ')[1] if 'DEFAULT ' in kind else 'NULL'} AS {name}"
            for name, kind in ADDED_COLUMNS
            if name not in have
        ]
        if added:
            columns = ", ".join(added)
            conn.execute(f"CREATE TEMP VIEW sessions AS SELECT *, {columns} FROM main.sessions")
