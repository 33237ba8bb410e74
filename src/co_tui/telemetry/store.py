"""The spans database: where it lives, its schema and indexes, and how to open it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from co_tui.config.paths import user_data_dir
from co_tui.safety.private_files import open_private_db

DB_NAME = "co-tui.db"

SCHEMA = """
CREATE TABLE IF NOT EXISTS spans (
    id TEXT PRIMARY KEY,
    trace_id TEXT NOT NULL,
    parent_id TEXT,
    name TEXT NOT NULL,
    kind TEXT,
    start_time INTEGER NOT NULL,  -- nanoseconds since the epoch
    end_time INTEGER,
    duration_ms REAL,
    status_code TEXT,
    status_description TEXT,
    attributes TEXT,              -- JSON object
    events TEXT,                  -- JSON array
    resource TEXT                 -- JSON object
);
-- The viewer's two queries: newest spans first, and every span of one trace.
CREATE INDEX IF NOT EXISTS idx_spans_start_time ON spans(start_time);
CREATE INDEX IF NOT EXISTS idx_spans_trace_id ON spans(trace_id);
-- The "left this machine" view: egress spans by name prefix.
CREATE INDEX IF NOT EXISTS idx_spans_name ON spans(name);
"""


def default_db_path() -> Path:
    return user_data_dir() / DB_NAME


def open_for_writing(path: Path) -> sqlite3.Connection:
    """Create the database if needed, in WAL mode so readers never block the writer."""
    conn = open_private_db(path, timeout=5.0)  # spans hold conversation text: 0600, -wal too
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(SCHEMA)
    return conn


def open_for_reading(path: Path) -> sqlite3.Connection | None:
    """Read-only; never creates the file (telemetry may be off). None when it does not exist."""
    if not path.is_file():
        return None
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    conn.row_factory = sqlite3.Row
    return conn
