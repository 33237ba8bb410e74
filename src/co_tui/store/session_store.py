"""SessionStore: every session in SQLite (WAL), one row per message; saves, loads, forks, lists.

`sessions.db` lives in the user data dir, apart from the telemetry database (co-tui.db),
so span writes and session writes never wait on each other's locks.

- A session's messages: (session_id, seq) -> one `ModelMessage` as JSON (records.py). The
  transcript only grows: what the model is sent may be a window or a summary
  (context/window.py), what is stored is every message. A save writes only the rows that
  changed since the last save (found by object identity, then by comparing JSON), so turn
  500 costs what turn 10 does.
- Its compactions: from which message on the model is sent a summary instead of the
  earlier ones (an event in the transcript, never a deletion).
- Its notes: errors shown in the transcript (an aborted turn's), with the number of
  messages stored when they happened, so a resumed session shows them where they were.
- Its tool runs, written ahead: an approved call is stored as running before it starts, as
  done when it returns and as interrupted when its turn is cancelled first, so a session
  reopened after a crash reports the call as interrupted (it may have run) instead of
  asking for it again. A run is keyed by the position of the response that made the call
  and the call's id: providers may reuse ids.
- Two writers: every save checks the session's version. A writer whose copy is stale gets
  `SessionConflict` and continues in a fork (recorder.py does this).
- A session written in another format version is migrated when a migration exists and
  refused with a clear message otherwise (schema.py); it is never dropped, and it stays
  listed.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import itertools
import json
import operator
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import pydantic
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    ToolCallPart,
)

from co_tui.context.compaction import Compaction, CompactionKind
from co_tui.context.dangling import CallAnswer, patch_dangling_tool_calls
from co_tui.context.tool_calls import tool_args
from co_tui.safety.private_files import open_private_db
from co_tui.store.database_file import diagnose, open_read_only
from co_tui.store.drafts import DraftError, DraftStore

if TYPE_CHECKING:
    from co_tui.safety.redaction import Redactor
from co_tui.store import schema
from co_tui.store.errors import (
    SessionConflict,
    SessionDatabaseAccess,
    SessionDatabaseCorrupt,
    SessionDatabaseLocked,
    SessionFormatError,
    SessionNotFound,
    SessionStoreError,
)
from co_tui.store.records import (
    NO_RECORD,
    LoadedSession,
    Note,
    SessionInfo,
    ToolRun,
    decode_messages,
    encode_message,
    new_session_id,
)
from co_tui.store.schema import (
    ADDED_COLUMNS,
    BUSY_TIMEOUT_S,
    MIGRATIONS,
    SCHEMA,
    SCHEMA_VERSION,
    UNKNOWN_POSITION,
    default_db_path,
    read_as_current,
    schema_version,
    upgrade_tool_runs,
)
from co_tui.store.tool_displays import restore_displays

RECHECK_TAIL = 2  # re-serialise the last saved messages too, in case one changed in place


_PendingAdapter = pydantic.TypeAdapter(DeferredToolRequests)


_STORE_ERRORS: dict[str, type[SessionStoreError]] = {
    "corrupt": SessionDatabaseCorrupt,
    "locked": SessionDatabaseLocked,
    "access": SessionDatabaseAccess,
}


RunKey = tuple[int, str]  # (the position of the response that made the call, its id)


def _last_response_at(messages: Sequence[ModelMessage]) -> int | None:
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], ModelResponse)),
        None,
    )


def _run_of(runs: dict[RunKey, ToolRun], response_at: int, call: ToolCallPart) -> ToolRun | None:
    """The journal's record of this very call, or None. A provider may reuse ids (`call_0`
    in every turn): the record is looked up by the position co-tui gave the call, and kept
    only if it names the same tool and arguments (a row from before schema 4, which has no
    position, is matched by those alone)."""
    run = runs.get((response_at, call.tool_call_id))
    if run is None:
        run = runs.get((UNKNOWN_POSITION, call.tool_call_id))
    if run is None or (run.tool_name, run.args) != (call.tool_name, tool_args(call)):
        return None
    return run


def _settle_unanswered(
    messages: list[ModelMessage], runs: dict[RunKey, ToolRun]
) -> tuple[list[ModelMessage], list[ToolRun]]:
    """Answer the calls of the last response that have no stored return, from what the
    tool-run journal knows; the runs that started but never returned are listed."""
    unfinished: list[ToolRun] = []
    response_at = _last_response_at(messages)

    def answer(call: ToolCallPart) -> CallAnswer:
        run = None if response_at is None else _run_of(runs, response_at, call)
        if run is None:
            return CallAnswer(NO_RECORD)
        if run.state != "denied":
            unfinished.append(run)
        return run.answer()

    return patch_dangling_tool_calls(messages, answer), unfinished


def _all_decided(
    pending: DeferredToolRequests, messages: Sequence[ModelMessage], runs: dict[RunKey, ToolRun]
) -> bool:
    """Whether the journal holds a decision for every call the session waits for (they are
    the calls of its last response)."""
    response_at = _last_response_at(messages)
    return response_at is not None and all(
        _run_of(runs, response_at, call) is not None for call in pending.approvals
    )


def _ends_interrupted(messages: Sequence[ModelMessage]) -> bool:
    for message in reversed(messages[-3:]):
        if isinstance(message, ModelResponse):
            return message.state == "interrupted"
    return False


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


@dataclass
class _Written:
    """What the store last wrote for a session: the objects and a digest of their JSON, by
    seq (the JSON itself would double a long session's memory), the session's version after
    that write, and what else that write stored."""

    objects: list[Any] = field(default_factory=list)
    digests: list[bytes] = field(default_factory=list)
    version: int | None = None  # None: the session is not in the database yet
    compactions: int = 0
    meta: tuple[Any, ...] = ()


_COLUMNS = (
    "id, title, model, cwd, created, updated, format_version, turns, message_count, "
    "pending IS NOT NULL, interrupted, forked_from, headless"
)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _info(row: Sequence[Any]) -> SessionInfo:
    return SessionInfo(
        id=row[0],
        title=row[1],
        model=row[2],
        cwd=row[3],
        created=row[4],
        updated=row[5],
        format_version=row[6],
        turns=row[7],
        message_count=row[8],
        has_pending=bool(row[9]),
        interrupted=bool(row[10]),
        forked_from=row[11],
        headless=bool(row[12]),
    )


_P = ParamSpec("_P")


_R = TypeVar("_R")


def _store_errors(
    method: Callable[Concatenate[SessionStore, _P], _R],
) -> Callable[Concatenate[SessionStore, _P], _R]:
    """A public method of the store: what SQLite or the file system refuses becomes a
    SessionStoreError naming the file and what to do (session_db.diagnose)."""

    @functools.wraps(method)
    def wrapper(self: SessionStore, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, OSError) as exc:
            kind, message = diagnose(self.path, exc, self.timeout)
            raise _STORE_ERRORS.get(kind, SessionStoreError)(message, self.path) from exc

    return wrapper


class SessionStore:
    """Thread-safe (one lock); the app calls it from thread workers. Reads go through a
    read-only connection until the first write opens the file read-write (creating it,
    upgrading its schema): listing and resuming never create the file, upgrade its schema or
    chmod anything (session_db.open_read_only)."""

    def __init__(
        self,
        path: Path | None = None,
        secrets: Iterable[str] = (),
        *,
        timeout: float = BUSY_TIMEOUT_S,
    ) -> None:
        """`secrets`: configured secret values; they (and credential-shaped strings) are
        replaced by [REDACTED] before anything is written. `timeout`: seconds to wait for
        another process's lock before SessionDatabaseLocked."""
        from co_tui.safety.redaction import Redactor

        self.path = path or default_db_path()
        self.timeout = timeout
        self._redactor = Redactor(secrets)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None  # read-write, from the first write on
        self._reading: sqlite3.Connection | None = None  # read-only, until then
        self._empty: sqlite3.Connection | None = None  # what reads see while there is no file
        self._snapshot: sqlite3.Connection | None = None  # the last immutable read's
        self._written: dict[str, _Written] = {}

    # -- connection --
    def _db(self) -> sqlite3.Connection:
        """The read-write connection: the file (0600, in a 0700 folder) in WAL mode, its
        schema created or upgraded."""
        if self._conn is None:
            self._reader()  # a damaged or newer file is refused before a write can touch it
            conn = open_private_db(self.path, timeout=self.timeout)  # -wal and -shm 0600 too
            try:
                conn.execute("PRAGMA synchronous=NORMAL")  # with WAL: durable across a crash
                version = schema_version(conn, self.path)
                conn.executescript(SCHEMA)
                if version < SCHEMA_VERSION:
                    have = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
                    conn.execute("BEGIN IMMEDIATE")  # the upgrade is whole or not at all
                    with conn:
                        for name, kind in ADDED_COLUMNS:
                            if name not in have:
                                conn.execute(f"ALTER TABLE sessions ADD COLUMN {name} {kind}")
                        upgrade_tool_runs(conn)
                        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            except BaseException:
                conn.close()
                raise
            self._conn = conn
            self._close_readers()  # reads use this connection from now on
        return self._conn

    def _reader(self) -> sqlite3.Connection:
        """The connection reads go through: the read-write one once a write opened it, else
        a read-only one. While there is no file, an empty in-memory store (none is made)."""
        if self._conn is not None:
            return self._conn
        if self._reading is None:
            opened = open_read_only(self.path, self.timeout)
            if opened is None:
                if self._empty is None:
                    self._empty = sqlite3.connect(":memory:", check_same_thread=False)
                    self._empty.executescript(SCHEMA)
                return self._empty
            conn, keep = opened
            try:
                if schema_version(conn, self.path) < SCHEMA_VERSION:
                    read_as_current(conn)
            except BaseException:
                conn.close()
                raise
            if not keep:  # read as immutable: a snapshot for this one read
                self._snapshot, old = conn, self._snapshot
                if old is not None:
                    old.close()
                return conn
            self._reading = conn
        return self._reading

    def _close_readers(self) -> None:
        for conn in (self._reading, self._empty, self._snapshot):
            if conn is not None:
                conn.close()
        self._reading = self._empty = self._snapshot = None

    def close(self) -> None:
        with self._lock:
            self._close_readers()
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- writing --
    @_store_errors
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
        compactions: Sequence[Compaction] = (),
        forked_from: str | None = None,
        headless: bool = False,
    ) -> int:
        """Store the session's history (and the compactions made so far, in order); returns
        how many message rows were written. Raises SessionConflict when another writer saved
        the session since this store last read or wrote it: nothing is written then."""
        with self._lock:
            db = self._db()
            written = self._written.get(session_id)
            if written is None:
                written = self._read_written(db, session_id)
            start = self._first_change(written, messages)
            encoded = [
                self._redactor.json_text(encode_message(messages[seq]).decode()).encode()
                for seq in range(start, len(messages))
            ]
            digests = [_digest(data) for data in encoded]
            rows = [
                (session_id, seq, messages[seq].kind, data)
                for seq, data, digest in zip(
                    range(start, len(messages)), encoded, digests, strict=True
                )
                if seq >= len(written.digests) or written.digests[seq] != digest
            ]
            pending_data = (
                self._redactor.json_text(_PendingAdapter.dump_json(pending).decode()).encode()
                if pending is not None
                else None
            )
            meta = (pending_data, turns, model, len(messages))
            new_compactions = list(compactions[written.compactions :])
            unchanged = not rows and not new_compactions and meta == written.meta
            if written.version is not None and unchanged:
                return 0  # nothing changed: the session keeps its place in the list
            now = time.time()
            title = self._redactor.text(title)
            try:
                db.execute("BEGIN IMMEDIATE")  # the version check and the write are one step
                with db:
                    version = self._check_version(db, session_id, written.version)
                    if version is None:
                        db.execute(
                            "INSERT INTO sessions (id, title, model, cwd, created, updated, "
                            "format_version, forked_from, headless) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (
                                session_id,
                                title,
                                model,
                                cwd,
                                now,
                                now,
                                schema.FORMAT_VERSION,
                                forked_from,
                                headless,
                            ),
                        )
                    db.executemany(
                        "INSERT OR REPLACE INTO messages (session_id, seq, kind, data) "
                        "VALUES (?, ?, ?, ?)",
                        rows,
                    )
                    if len(written.digests) > len(messages):
                        # Only a discarded attempt's partial answer is ever dropped (a retry
                        # or an abort right after it); the conversation itself only grows.
                        db.execute(
                            "DELETE FROM messages WHERE session_id = ? AND seq >= ?",
                            (session_id, len(messages)),
                        )
                    for offset, compaction in enumerate(new_compactions):
                        self._insert_compaction(
                            db, session_id, written.compactions + offset, compaction, now
                        )
                    db.execute(
                        "UPDATE sessions SET updated = ?, message_count = ?, pending = ?, "
                        "interrupted = ?, turns = COALESCE(?, turns), version = version + 1, "
                        "writer_pid = ?, title = CASE WHEN title = '' THEN ? ELSE title END, "
                        "model = CASE WHEN ? = '' THEN model ELSE ? END, "
                        # continued in the app, a -p session becomes an ordinary one
                        "headless = CASE WHEN ? THEN headless ELSE 0 END WHERE id = ?",
                        (
                            now,
                            len(messages),
                            pending_data,
                            _ends_interrupted(messages),
                            turns,
                            os.getpid(),
                            title,
                            model,
                            model,
                            headless,
                            session_id,
                        ),
                    )
            except BaseException:
                self._written.pop(session_id, None)  # unknown state: re-read on the next save
                raise
            del written.objects[start:], written.digests[start:]  # in place: no O(n) copy
            written.objects.extend(messages[start:])
            written.digests.extend(digests)
            written.version = (version or 0) + 1
            written.compactions += len(new_compactions)
            written.meta = meta
            self._written[session_id] = written
            return len(rows)

    @staticmethod
    def _check_version(db: sqlite3.Connection, session_id: str, expected: int | None) -> int | None:
        """The session's stored version (None: not stored yet); SessionConflict when it is
        not the one this store last saw."""
        row = db.execute(
            "SELECT version, writer_pid FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        stored = None if row is None else int(row[0])
        if stored != expected:
            raise SessionConflict(session_id, row[1] if row else None)
        return stored

    def _insert_compaction(
        self, db: sqlite3.Connection, session_id: str, seq: int, compaction: Compaction, now: float
    ) -> None:
        replacement = ModelMessagesTypeAdapter.dump_json(list(compaction.replacement)).decode()
        db.execute(
            "INSERT OR REPLACE INTO compactions (session_id, seq, upto, kind, trim_through, "
            "created, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                seq,
                compaction.upto,
                compaction.kind,
                compaction.trim_through,
                now,
                self._redactor.json_text(replacement).encode(),
            ),
        )

    def fork(self, source_id: str, messages: Sequence[ModelMessage], **fields: Any) -> str:
        """A new session holding `messages`, recorded as a fork of `source_id`; its id.
        `fields`: save()'s (pending, title, model, cwd, turns, compactions)."""
        fork_id = new_session_id()
        self.save(fork_id, messages, forked_from=source_id, **fields)
        return fork_id

    # -- tool runs, written ahead --
    @_store_errors
    def calls_started(self, session_id: str, runs: Sequence[ToolRun]) -> None:
        """Decided calls, before any of them runs: approved ones as running, denied ones as
        denied. The session stops waiting for approval in the same write."""
        now = time.time()
        with self._lock:
            db = self._db()
            with db:
                db.executemany(
                    "INSERT OR REPLACE INTO tool_runs (session_id, response_at, tool_call_id, "
                    "tool_name, args, decision, state, started) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            session_id,
                            run.response_at,
                            run.tool_call_id,
                            run.tool_name,
                            self._redactor.json_text(
                                json.dumps(run.args, ensure_ascii=False)
                            ).encode(),
                            run.decision,
                            run.state,
                            now,
                        )
                        for run in runs
                    ],
                )
                db.execute("UPDATE sessions SET pending = NULL WHERE id = ?", (session_id,))
            written = self._written.get(session_id)
            if written is not None and written.meta:
                written.meta = (None, *written.meta[1:])

    @_store_errors
    def call_finished(
        self, session_id: str, response_at: int, tool_call_id: str, result: str
    ) -> None:
        """The call the response at `response_at` made as `tool_call_id` returned `result`."""
        with self._lock:
            db = self._db()
            with db:
                db.execute(
                    "UPDATE tool_runs SET state = 'done', result = ?, finished = ? "
                    "WHERE session_id = ? AND response_at = ? AND tool_call_id = ?",
                    (
                        self._redactor.text(result),
                        time.time(),
                        session_id,
                        response_at,
                        tool_call_id,
                    ),
                )

    @_store_errors
    def call_interrupted(self, session_id: str, response_at: int, tool_call_id: str) -> None:
        """The call was running when its turn was cancelled (Esc, a signal): it is closed as
        interrupted, never left running."""
        with self._lock:
            db = self._db()
            with db:
                db.execute(
                    "UPDATE tool_runs SET state = 'interrupted', finished = ? "
                    "WHERE session_id = ? AND response_at = ? AND tool_call_id = ? "
                    "AND state = 'running'",
                    (time.time(), session_id, response_at, tool_call_id),
                )

    @property
    def redactor(self) -> Redactor:
        """What every write goes through (an export reuses it)."""
        return self._redactor

    @_store_errors
    def decisions(self, session_id: str) -> dict[str, str]:
        """How each decided call of the session was decided: tool call id -> decision."""
        with self._lock:
            runs = self._tool_runs(self._reader(), session_id)
        # A reused id: the latest call's decision (rows come in order of position).
        return {call_id: run.decision for (_, call_id), run in runs.items()}

    def _tool_runs(self, db: sqlite3.Connection, session_id: str) -> dict[RunKey, ToolRun]:
        rows = db.execute(
            "SELECT response_at, tool_call_id, tool_name, args, decision, state, result "
            "FROM tool_runs WHERE session_id = ? ORDER BY response_at",
            (session_id,),
        ).fetchall()
        runs: dict[RunKey, ToolRun] = {}
        for response_at, call_id, name, args, decision, state, result in rows:
            try:
                parsed = json.loads(args)
            except ValueError:
                parsed = {}
            runs[(response_at, call_id)] = ToolRun(
                call_id,
                name,
                parsed if isinstance(parsed, dict) else {},
                decision,
                state,
                result,
                response_at=response_at,
            )
        return runs

    @staticmethod
    def _first_change(written: _Written, messages: Sequence[ModelMessage]) -> int:
        old = written.objects
        # The usual case, an append: list equality checks identity first, all in C.
        if len(old) <= len(messages) and old == messages[: len(old)]:
            same = len(old)
        else:
            differs = map(operator.is_not, old, messages)
            first = next(itertools.compress(itertools.count(), differs), None)
            same = min(len(old), len(messages)) if first is None else first
        return max(0, min(same, len(old) - RECHECK_TAIL))

    @staticmethod
    def _read_written(db: sqlite3.Connection, session_id: str) -> _Written:
        rows = db.execute(
            "SELECT data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
        digests = [_digest(r[0]) for r in rows]
        head = db.execute(
            "SELECT version, (SELECT COUNT(*) FROM compactions WHERE session_id = ?) "
            "FROM sessions WHERE id = ?",
            (session_id, session_id),
        ).fetchone()
        version, compactions = (None, 0) if head is None else (int(head[0]), int(head[1]))
        return _Written([None] * len(digests), digests, version, compactions)

    @_store_errors
    def set_title(self, session_id: str, title: str) -> None:
        with self._lock, self._db() as db:
            db.execute(
                "UPDATE sessions SET title = ? WHERE id = ?",
                (self._redactor.text(title), session_id),
            )

    @_store_errors
    def add_note(self, session_id: str, note: Note) -> None:
        """Keep an error the transcript showed (secrets redacted), in order."""
        with self._lock, self._db() as db:
            db.execute(
                "INSERT INTO notes (session_id, seq, position, level, message, created) "
                "VALUES (?, (SELECT COUNT(*) FROM notes WHERE session_id = ?), ?, ?, ?, ?)",
                (
                    session_id,
                    session_id,
                    note.position,
                    note.level,
                    self._redactor.text(note.message),
                    time.time(),
                ),
            )

    def delete(self, session_id: str) -> None:
        """The session's messages and notes, then its unsent draft (store/drafts.py, in the
        data folder beside the database): nothing of it is left to come back."""
        self._delete_rows(session_id)
        try:
            DraftStore(self.path.parent).discard(session_id)
        except DraftError as exc:
            message = f"The session is deleted, but not its draft: {exc}"
            raise SessionStoreError(message, self.path) from exc

    @_store_errors
    def _delete_rows(self, session_id: str) -> None:
        with self._lock:
            db = self._db()
            with db:
                db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                db.execute("DELETE FROM notes WHERE session_id = ?", (session_id,))
                db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            self._written.pop(session_id, None)

    # -- reading --
    @_store_errors
    def info(self, session_id: str) -> SessionInfo:
        with self._lock:
            row = (
                self._reader()
                .execute(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
                .fetchone()
            )
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return _info(row)

    @_store_errors
    def list(
        self,
        cwd: str | None = None,
        search: str = "",
        limit: int = 500,
        *,
        include_headless: bool = True,
    ) -> list[SessionInfo]:
        """Newest first; `search` matches the title or the start of the id.
        `include_headless=False` leaves out what `co-tui -p` wrote."""
        where, args = [], []
        if not include_headless:
            where.append("headless = 0")
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
            rows = self._reader().execute(sql, (*args, limit)).fetchall()
        return [_info(r) for r in rows]

    def latest(self, cwd: str) -> SessionInfo | None:
        found = self.list(cwd=cwd, limit=1)
        return found[0] if found else None

    @_store_errors
    def resolve(self, id_or_prefix: str) -> SessionInfo:
        """A full id, or a prefix of exactly one."""
        with self._lock:
            rows = (
                self._reader()
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

    @_store_errors
    def load(self, session_id: str) -> LoadedSession:
        """The session, its compactions, and its history made whole: calls that were
        decided but whose return was never stored get an answer saying what is known
        (`LoadedSession.unfinished`); calls still waiting for approval stay `pending`."""
        with self._lock:
            db = self._reader()
            db.execute("BEGIN")  # one snapshot: the version goes with the rows read
            try:
                row = db.execute(
                    f"SELECT {_COLUMNS}, pending, version FROM sessions WHERE id = ?",
                    (session_id,),
                ).fetchone()
                if row is None:
                    raise SessionNotFound(f"no session {session_id}")
                rows = [
                    bytes(r[0])
                    for r in db.execute(
                        "SELECT data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
                    )
                ]
                compaction_rows = db.execute(
                    "SELECT upto, kind, trim_through, data FROM compactions "
                    "WHERE session_id = ? ORDER BY seq",
                    (session_id,),
                ).fetchall()
                runs = self._tool_runs(db, session_id)
                notes = [
                    Note(int(position), str(message), level)
                    for position, level, message in db.execute(
                        "SELECT position, level, message FROM notes WHERE session_id = ? "
                        "ORDER BY seq",
                        (session_id,),
                    )
                ]
            finally:
                db.commit()
        info, pending_data, version = _info(row), row[-2], int(row[-1])
        rows = self._migrate(info, rows)
        stored = self._decode(info, rows)
        compactions = [self._compaction(info, *c) for c in compaction_rows]
        pending = self._pending(info, pending_data)
        if pending is not None and _all_decided(pending, stored, runs):
            pending = None  # decided before co-tui stopped: nothing is asked again
        messages, unfinished = stored, list[ToolRun]()
        if pending is None:
            messages, unfinished = _settle_unanswered(stored, runs)
        with self._lock:
            digests = list(map(_digest, rows))
            self._written[session_id] = _Written(list(stored), digests, version, len(compactions))
        return LoadedSession(info, messages, pending, compactions, unfinished, notes)

    @staticmethod
    def _pending(info: SessionInfo, data: bytes | None) -> DeferredToolRequests | None:
        if data is None:
            return None
        try:
            return _PendingAdapter.validate_json(data)
        except pydantic.ValidationError as exc:
            raise SessionFormatError(
                f"session {info.id[:8]}: its pending approval cannot be read "
                f"({exc.error_count()} error(s)); it was left untouched"
            ) from None

    @staticmethod
    def _compaction(
        info: SessionInfo, upto: int, kind: str, trim_through: int, data: bytes
    ) -> Compaction:
        try:
            replacement = ModelMessagesTypeAdapter.validate_json(data)
        except pydantic.ValidationError:
            raise SessionFormatError(
                f"session {info.id[:8]}: a summary of its earlier messages cannot be read; "
                "the session was left untouched"
            ) from None
        restore_displays(replacement)
        known: CompactionKind = kind if kind in ("window", "compact", "overflow") else "window"  # type: ignore[assignment]
        return Compaction(upto, tuple(replacement), known, trim_through)

    def _migrate(self, info: SessionInfo, rows: builtins.list[bytes]) -> builtins.list[bytes]:
        version = info.format_version
        if version > schema.FORMAT_VERSION:
            raise SessionFormatError(
                f"session {info.id[:8]} was saved by a newer co-tui (format {version}; this "
                f"one reads up to {schema.FORMAT_VERSION}). Upgrade co-tui to open it; it was left "
                "untouched."
            )
        if version == schema.FORMAT_VERSION:
            return rows
        while version < schema.FORMAT_VERSION:
            step = MIGRATIONS.get(version)
            if step is None:
                raise SessionFormatError(
                    f"session {info.id[:8]} uses format {version}, which this co-tui cannot "
                    f"migrate to format {schema.FORMAT_VERSION}; it was left untouched."
                )
            rows = [step(r) for r in rows]
            version += 1
        self._rewrite(info.id, rows)
        return rows

    def _rewrite(self, session_id: str, rows: builtins.list[bytes]) -> None:
        with self._lock:
            db = self._db()
            with db:
                db.executemany(
                    "UPDATE messages SET data = ? WHERE session_id = ? AND seq = ?",
                    [(data, session_id, seq) for seq, data in enumerate(rows)],
                )
                db.execute(
                    "UPDATE sessions SET format_version = ? WHERE id = ?",
                    (schema.FORMAT_VERSION, session_id),
                )

    @staticmethod
    def _decode(info: SessionInfo, rows: builtins.list[bytes]) -> builtins.list[ModelMessage]:
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

    @_store_errors
    def integrity_check(self) -> str:
        with self._lock:
            return str(self._reader().execute("PRAGMA integrity_check").fetchone()[0])
