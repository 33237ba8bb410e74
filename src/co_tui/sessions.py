"""The conversation store: every session in SQLite (WAL), one row per message.

`sessions.db` lives in the user data dir, apart from the telemetry database (co-tui.db),
so span writes and session writes never wait on each other's locks.

- A session row: id, title (the first prompt), model, working directory, created, updated,
  format version, turns, message count, the approvals it is waiting for, interrupted flag.
- Its messages: (session_id, seq) -> one `ModelMessage` as JSON, written with pydantic-ai's
  `ModelMessagesTypeAdapter`. A save rewrites only the rows that changed since the last save
  (found by object identity, then by comparing JSON), so turn 500 costs what turn 10 does.
- `FORMAT_VERSION` is the encoding of a message row. A session written in another version is
  migrated when a migration exists and refused with a clear message otherwise; it is never
  dropped, and it stays listed.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse

from co_tui.config import user_data_dir
from co_tui.orchestrator.dangling import patch_dangling_tool_calls
from co_tui.private_files import open_private_db

DB_NAME = "sessions.db"
SCHEMA_VERSION = 1  # PRAGMA user_version: the table layout
FORMAT_VERSION = 1  # the encoding of one message row (pydantic-ai 2.x message JSON)
TITLE_CHARS = 80
RECHECK_TAIL = 2  # re-serialise the last saved messages too, in case one changed in place
ABANDONED_APPROVAL = "Not run: the approval was never given (the session was reopened)."

# Migrations of one message's JSON from format n to n + 1 (none needed yet).
MIGRATIONS: dict[int, Callable[[bytes], bytes]] = {}

_PendingAdapter = pydantic.TypeAdapter(DeferredToolRequests)

_SCHEMA = """
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
    interrupted INTEGER NOT NULL DEFAULT 0
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
"""


class SessionError(Exception):
    """A session cannot be opened. The message is one line, ready to show."""


class SessionNotFound(SessionError):
    pass


class SessionFormatError(SessionError):
    pass


def default_db_path() -> Path:
    return user_data_dir() / DB_NAME


def new_session_id() -> str:
    return str(uuid.uuid4())


def title_from_prompt(prompt: str) -> str:
    line = next((ln.strip() for ln in prompt.splitlines() if ln.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def encode_message(message: ModelMessage) -> bytes:
    return ModelMessagesTypeAdapter.dump_json([message])[1:-1]  # the one element of the list


def decode_messages(rows: Sequence[bytes]) -> list[ModelMessage]:
    return ModelMessagesTypeAdapter.validate_json(b"[" + b",".join(rows) + b"]")


def _ends_interrupted(messages: Sequence[ModelMessage]) -> bool:
    for message in reversed(messages[-3:]):
        if isinstance(message, ModelResponse):
            return message.state == "interrupted"
    return False


@dataclass(frozen=True)
class SessionInfo:
    id: str
    title: str
    model: str
    cwd: str
    created: float
    updated: float
    format_version: int
    turns: int
    message_count: int
    has_pending: bool
    interrupted: bool

    @property
    def readable(self) -> bool:
        return self.format_version == FORMAT_VERSION or self.format_version in MIGRATIONS

    def age(self, now: float | None = None) -> str:
        return human_age((now or time.time()) - self.updated)


def human_age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"


@dataclass
class LoadedSession:
    info: SessionInfo
    messages: list[ModelMessage]
    pending: DeferredToolRequests | None = None

    def history_without_pending(self) -> list[ModelMessage]:
        """For a frontend that will not ask: the pending calls answered as not run."""
        if self.pending is None:
            return self.messages
        return patch_dangling_tool_calls(self.messages, ABANDONED_APPROVAL)


@dataclass
class _Written:
    """What the store last wrote for a session: the objects and their JSON, by seq."""

    objects: list[Any] = field(default_factory=list)
    data: list[bytes] = field(default_factory=list)


_COLUMNS = (
    "id, title, model, cwd, created, updated, format_version, turns, message_count, "
    "pending IS NOT NULL, interrupted"
)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _info(row: Sequence[Any]) -> SessionInfo:
    return SessionInfo(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8],
        bool(row[9]), bool(row[10]),
    )  # fmt: skip


class SessionStore:
    """Thread-safe (one connection, one lock); the app calls it from thread workers."""

    def __init__(self, path: Path | None = None, secrets: Iterable[str] = ()) -> None:
        """`secrets`: configured secret values; they (and credential-shaped strings) are
        replaced by [REDACTED] before anything is written."""
        from co_tui.redaction import Redactor

        self.path = path or default_db_path()
        self._redactor = Redactor(secrets)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._written: dict[str, _Written] = {}

    # -- connection --
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = open_private_db(self.path, timeout=10)  # 0600, as are its -wal and -shm
            conn.execute("PRAGMA synchronous=NORMAL")  # with WAL: durable across a crash
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                conn.close()
                raise SessionFormatError(
                    f"{self.path} was written by a newer co-tui (schema {version}; this one "
                    f"knows {SCHEMA_VERSION}). Upgrade co-tui to use its sessions."
                )
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._conn = conn
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- writing --
    def save(
        self,
        session_id: str,
        messages: Sequence[ModelMessage],
        *,
        pending: DeferredToolRequests | None = None,
        title: str = "",
        model: str = "",
        cwd: str = "",
        turns: int | None = None,
    ) -> int:
        """Store the session's history; returns how many message rows were written."""
        with self._lock:
            db = self._db()
            written = self._written.get(session_id)
            if written is None:
                written = self._read_written(db, session_id)
            start = self._first_change(written, messages)
            rows: list[tuple[str, int, str, bytes]] = []
            old_count = len(written.data)
            old_tail = written.data[start:]
            del written.objects[start:], written.data[start:]  # in place: no O(n) copy
            for seq in range(start, len(messages)):
                data = self._redactor.json_text(encode_message(messages[seq]).decode()).encode()
                written.objects.append(messages[seq])
                written.data.append(data)
                index = seq - start
                if index >= len(old_tail) or old_tail[index] != data:
                    rows.append((session_id, seq, messages[seq].kind, data))
            now = time.time()
            pending_data = (
                self._redactor.json_text(_PendingAdapter.dump_json(pending).decode()).encode()
                if pending is not None
                else None
            )
            title = self._redactor.text(title)
            try:
                with db:
                    db.execute(
                        "INSERT INTO sessions (id, title, model, cwd, created, updated, "
                        "format_version) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
                        (session_id, title, model, cwd, now, now, FORMAT_VERSION),
                    )
                    db.executemany(
                        "INSERT OR REPLACE INTO messages (session_id, seq, kind, data) "
                        "VALUES (?, ?, ?, ?)",
                        rows,
                    )
                    if old_count > len(messages):
                        db.execute(
                            "DELETE FROM messages WHERE session_id = ? AND seq >= ?",
                            (session_id, len(messages)),
                        )
                    db.execute(
                        "UPDATE sessions SET updated = ?, message_count = ?, pending = ?, "
                        "interrupted = ?, turns = COALESCE(?, turns), "
                        "title = CASE WHEN title = '' THEN ? ELSE title END, "
                        "model = CASE WHEN ? = '' THEN model ELSE ? END WHERE id = ?",
                        (now, len(messages), pending_data, _ends_interrupted(messages), turns,
                         title, model, model, session_id),
                    )  # fmt: skip
            except BaseException:
                self._written.pop(session_id, None)  # unknown state: re-read on the next save
                raise
            self._written[session_id] = written
            return len(rows)

    @staticmethod
    def _first_change(written: _Written, messages: Sequence[ModelMessage]) -> int:
        old = written.objects
        # The usual case, an append: list equality checks identity first, all in C.
        if len(old) <= len(messages) and old == messages[: len(old)]:
            same = len(old)
        else:
            differs = map(operator.is_not, old, messages)
            same = next(itertools.compress(itertools.count(), differs), None)
            if same is None:
                same = min(len(old), len(messages))
        return max(0, min(same, len(old) - RECHECK_TAIL))

    @staticmethod
    def _read_written(db: sqlite3.Connection, session_id: str) -> _Written:
        rows = db.execute(
            "SELECT data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
        data = [bytes(r[0]) for r in rows]
        return _Written([None] * len(data), data)

    def set_title(self, session_id: str, title: str) -> None:
        with self._lock, self._db() as db:
            db.execute(
                "UPDATE sessions SET title = ? WHERE id = ?",
                (self._redactor.text(title), session_id),
            )

    def delete(self, session_id: str) -> None:
        with self._lock:
            db = self._db()
            with db:
                db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            self._written.pop(session_id, None)

    # -- reading --
    def info(self, session_id: str) -> SessionInfo:
        with self._lock:
            row = (
                self._db()
                .execute(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
                .fetchone()
            )
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return _info(row)

    def list(self, cwd: str | None = None, search: str = "", limit: int = 500) -> list[SessionInfo]:
        """Newest first; `search` matches the title or the start of the id."""
        where, args = [], []
        if cwd is not None:
            where.append("cwd = ?")
            args.append(cwd)
        if search:
            where.append("(title LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\')")
            escaped = _escape_like(search)
            args += [f"%{escaped}%", f"{escaped}%"]
        sql = f"SELECT {_COLUMNS} FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated DESC LIMIT ?"
        with self._lock:
            rows = self._db().execute(sql, (*args, limit)).fetchall()
        return [_info(r) for r in rows]

    def latest(self, cwd: str) -> SessionInfo | None:
        found = self.list(cwd=cwd, limit=1)
        return found[0] if found else None

    def resolve(self, id_or_prefix: str) -> SessionInfo:
        """A full id, or a prefix of exactly one."""
        with self._lock:
            rows = (
                self._db()
                .execute(
                    f"SELECT {_COLUMNS} FROM sessions WHERE id LIKE ? ESCAPE '\\' "
                    "ORDER BY updated DESC LIMIT 2",
                    (_escape_like(id_or_prefix) + "%",),
                )
                .fetchall()
            )
        exact = [r for r in rows if r[0] == id_or_prefix]
        if exact:
            return _info(exact[0])
        if not rows:
            raise SessionNotFound(f"no session matches {id_or_prefix!r}")
        if len(rows) > 1:
            raise SessionNotFound(f"{id_or_prefix!r} matches several sessions; give more of the id")
        return _info(rows[0])

    def load(self, session_id: str) -> LoadedSession:
        info = self.info(session_id)
        with self._lock:
            db = self._db()
            rows = [bytes(r[0]) for r in db.execute(
                "SELECT data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            )]  # fmt: skip
            pending_row = db.execute(
                "SELECT pending FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        rows = self._migrate(info, rows)
        messages = self._decode(info, rows)
        pending = None
        if pending_row and pending_row[0] is not None:
            try:
                pending = _PendingAdapter.validate_json(pending_row[0])
            except pydantic.ValidationError as exc:
                raise SessionFormatError(
                    f"session {info.id[:8]}: its pending approval cannot be read "
                    f"({exc.error_count()} error(s)); it was left untouched"
                ) from None
        with self._lock:
            self._written[session_id] = _Written(list(messages), rows)
        return LoadedSession(info, messages, pending)

    def _migrate(self, info: SessionInfo, rows: list[bytes]) -> list[bytes]:
        version = info.format_version
        if version > FORMAT_VERSION:
            raise SessionFormatError(
                f"session {info.id[:8]} was saved by a newer co-tui (format {version}; this "
                f"one reads up to {FORMAT_VERSION}). Upgrade co-tui to open it; it was left "
                "untouched."
            )
        if version == FORMAT_VERSION:
            return rows
        while version < FORMAT_VERSION:
            step = MIGRATIONS.get(version)
            if step is None:
                raise SessionFormatError(
                    f"session {info.id[:8]} uses format {version}, which this co-tui cannot "
                    f"migrate to format {FORMAT_VERSION}; it was left untouched."
                )
            rows = [step(r) for r in rows]
            version += 1
        self._rewrite(info.id, rows)
        return rows

    def _rewrite(self, session_id: str, rows: list[bytes]) -> None:
        with self._lock:
            db = self._db()
            with db:
                db.executemany(
                    "UPDATE messages SET data = ? WHERE session_id = ? AND seq = ?",
                    [(data, session_id, seq) for seq, data in enumerate(rows)],
                )
                db.execute(
                    "UPDATE sessions SET format_version = ? WHERE id = ?",
                    (FORMAT_VERSION, session_id),
                )

    @staticmethod
    def _decode(info: SessionInfo, rows: list[bytes]) -> list[ModelMessage]:
        try:
            return decode_messages(rows)
        except pydantic.ValidationError:
            pass
        for seq, row in enumerate(rows):  # find the culprit for the message
            try:
                decode_messages([row])
            except pydantic.ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first.get("loc", ()))
                raise SessionFormatError(
                    f"session {info.id[:8]}: message {seq} cannot be read ({where}: "
                    f"{first.get('msg')}); the session was left untouched"
                ) from None
        raise SessionFormatError(f"session {info.id[:8]} cannot be read")

    def integrity_check(self) -> str:
        with self._lock:
            return str(self._db().execute("PRAGMA integrity_check").fetchone()[0])


class SessionRecorder:
    """One session being recorded: the `on_checkpoint` hook of run_turn, and turn counting."""

    def __init__(
        self,
        store: SessionStore,
        session_id: str | None = None,
        *,
        model: str = "",
        cwd: Path | str | None = None,
        turns: int = 0,
        title: str = "",
    ) -> None:
        self.store = store
        self.session_id = session_id or new_session_id()
        self.model = model
        self.cwd = str(Path(cwd or Path.cwd()).resolve())
        self.turns = turns
        self.title = title

    @classmethod
    def resume(cls, store: SessionStore, loaded: LoadedSession, model: str = "") -> SessionRecorder:
        info = loaded.info
        return cls(store, info.id, model=model or info.model, cwd=info.cwd, turns=info.turns,
                   title=info.title)  # fmt: skip

    def begin_turn(self, prompt: str) -> None:
        self.turns += 1
        if not self.title:
            self.title = title_from_prompt(prompt)

    def save(
        self, messages: Sequence[ModelMessage], pending: DeferredToolRequests | None = None
    ) -> int:
        return self.store.save(
            self.session_id, messages, pending=pending, title=self.title, model=self.model,
            cwd=self.cwd, turns=self.turns,
        )  # fmt: skip

    async def checkpoint(
        self, messages: list[ModelMessage], pending: DeferredToolRequests | None
    ) -> None:
        """run_turn's `on_checkpoint`: the write runs in a thread, off the event loop."""
        await asyncio.to_thread(self.save, messages, pending)

    def start_new(self, session_id: str | None = None) -> None:
        """After /clear: later turns go to a fresh session; the old one stays resumable."""
        self.session_id = session_id or new_session_id()
        self.turns = 0
        self.title = ""


def open_session(
    store: SessionStore,
    cwd: Path | str,
    *,
    continue_latest: bool = False,
    resume: str | None = None,
) -> LoadedSession | None:
    """What `--continue` / `--resume ID` name: a loaded session, or None for a new one.
    Raises SessionError (one line) when there is nothing to continue or it cannot be read."""
    if resume:
        return store.load(store.resolve(resume).id)
    if continue_latest:
        where = str(Path(cwd).resolve())
        info = store.latest(where)
        if info is None:
            raise SessionNotFound(f"no earlier session in {where} to continue")
        return store.load(info.id)
    return None
