"""A persistent search index over an Obsidian vault: SQLite FTS5 under the XDG data dir.

One database per vault (keyed by a hash of its resolved path). `refresh()` stats every
note and re-reads only those whose mtime or size changed, so a search on an unchanged
vault costs one directory walk. FTS5 narrows the candidates; `search()` then confirms
each with the exact rule: every keyword present, case-insensitive, on word boundaries.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from co_tui.config.paths import user_data_dir
from co_tui.knowledge.note_parse import note_tags, tag_matches
from co_tui.knowledge.vault_watch import VaultWatcher
from co_tui.safety.private_files import open_private_db
from co_tui.safety.safe_read import ReadRefused, read_text_within, walk_within

SCHEMA_VERSION = "2"
NOTE_SUFFIX = ".md"
MAX_INDEXED_BYTES = 16_000_000  # of a larger note, only the head is searchable
_TOKEN = re.compile(r"\w+")  # what the FTS5 tokenizer below keeps as one token
# A keyword of plain ASCII word characters matches an FTS token exactly when it matches
# the word-boundary regex, so such queries need no second check and can page in SQL.
_SIMPLE = re.compile(r"[A-Za-z0-9_]+")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    tags TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(
    path, body, tokenize="unicode61 remove_diacritics 0 tokenchars '_'"
);
"""


def index_path_for(vault: Path) -> Path:
    key = hashlib.sha256(str(vault.resolve()).encode()).hexdigest()[:16]
    return user_data_dir() / "notes-index" / f"{key}.sqlite"


def _visible(name: str) -> bool:
    return not name.startswith(".")


def split_keywords(query: str) -> list[str]:
    """Whitespace-separated keywords, de-duplicated case-insensitively, order kept."""
    seen: dict[str, str] = {}
    for word in query.split():
        seen.setdefault(word.casefold(), word)
    return list(seen.values())


def keyword_pattern(keyword: str) -> re.Pattern[str]:
    # Lookarounds rather than \b, so keywords like "c++" or "#tag" still get boundaries.
    return re.compile(rf"(?<!\w){re.escape(keyword)}(?!\w)", re.IGNORECASE)


@dataclass(frozen=True)
class NoteMatch:
    path: str
    body: str


@dataclass(frozen=True)
class SearchPage:
    total: int
    matches: list[NoteMatch]


@dataclass(frozen=True)
class RefreshStats:
    notes: int
    reindexed: int
    removed: int
    seconds: float


class NotesIndex:
    """Thread-safe: tools run in worker threads, so one lock guards the connection."""

    def __init__(self, vault: Path, db_path: Path | None = None) -> None:
        self.vault = vault.resolve()
        self.db_path = db_path or index_path_for(self.vault)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._known: dict[str, tuple[int, int, int]] = {}  # path -> (id, mtime_ns, size)
        self._tags: dict[str, list[str]] = {}
        self._watcher: VaultWatcher | None = None
        self._scanned = False  # a full scan ran in this process (so watches are in place)

    # -- connection --------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        try:
            conn = self._open()
        except sqlite3.DatabaseError:  # a corrupt index is only a cache: rebuild it
            self.db_path.unlink(missing_ok=True)
            conn = self._open()
        self._conn = conn
        rows = conn.execute("SELECT id, path, mtime_ns, size, tags FROM notes").fetchall()
        self._known = {p: (i, m, s) for i, p, m, s, _ in rows}
        self._tags = {p: t.split() for _, p, _, _, t in rows}
        return conn

    def _open(self) -> sqlite3.Connection:
        conn = open_private_db(self.db_path, timeout=5.0)
        conn.execute("PRAGMA synchronous=NORMAL")
        version = None
        has_meta = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if has_meta:
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            version = row[0] if row else None
        if has_meta and version != SCHEMA_VERSION:
            conn.executescript("DROP TABLE IF EXISTS notes; DROP TABLE IF EXISTS notes_fts;")
        conn.executescript(_SCHEMA)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('vault', ?)", (str(self.vault),))
        conn.commit()
        return conn

    def close(self) -> None:
        with self._lock:
            if self._watcher is not None:
                self._watcher.close()
                self._watcher = None
                self._scanned = False
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- refresh -----------------------------------------------------------------------
    def _scan(self) -> dict[str, tuple[int, int]]:
        """Every note in the vault: relative posix path -> (mtime_ns, size).

        Hidden entries (.obsidian, .trash, .git) are skipped, and so is every symbolic
        link: folders are entered through their parent's descriptor without following
        links (co_tui.safety.safe_read), so nothing outside the vault is listed. Each directory
        is watched before it is read.
        """
        root = str(self.vault)
        watcher = self._watcher

        def enter(prefix: str) -> None:
            if watcher is not None:
                watcher.watch(os.path.join(root, prefix) if prefix else root, prefix)

        found: dict[str, tuple[int, int]] = {}
        walk = walk_within(self.vault, descend=_visible, on_enter=enter)
        try:
            for prefix, entries in walk:
                for entry in entries:
                    if not _visible(entry.name) or not entry.name.endswith(NOTE_SUFFIX):
                        continue
                    try:
                        if entry.is_file(follow_symlinks=False):
                            st = entry.stat(follow_symlinks=False)
                            found[prefix + entry.name] = (st.st_mtime_ns, st.st_size)
                    except OSError:
                        continue
        except ReadRefused:  # the vault itself cannot be opened
            pass
        return found

    def _read(self, rel: str) -> str | None:
        """The note's text, opened below the vault without following links; None when it
        is gone or refused (a link, not a regular file)."""
        try:
            return read_text_within(
                self.vault, rel, limit=MAX_INDEXED_BYTES, truncate=True, errors="replace"
            )
        except ReadRefused:
            return None

    def _stat_touched(
        self, touched: set[str]
    ) -> tuple[list[tuple[str, tuple[int, int]]], list[str]]:
        changed: list[tuple[str, tuple[int, int]]] = []
        removed: list[str] = []
        for rel in touched:
            if not rel.endswith(NOTE_SUFFIX) or any(p.startswith(".") for p in rel.split("/")):
                continue
            try:
                st = os.stat(os.path.join(self.vault, rel), follow_symlinks=False)
                regular = stat.S_ISREG(st.st_mode)
            except OSError:
                regular = False
            if not regular:
                if rel in self._known:
                    removed.append(rel)
                continue
            stamp = (st.st_mtime_ns, st.st_size)
            known = self._known.get(rel)
            if known is None or (known[1], known[2]) != stamp:
                changed.append((rel, stamp))
        return changed, removed

    def refresh(self) -> RefreshStats:
        """Bring the index up to date with the vault; returns what it did.

        The first refresh stats every note; later ones, where inotify works, only the
        notes it reported as touched (and rescan whenever it cannot say exactly).
        """
        start = time.perf_counter()
        with self._lock:
            conn = self._connect()
            if self._watcher is None and not self._scanned:
                self._watcher = VaultWatcher.create()
            touched = self._watcher.drain() if self._watcher and self._scanned else None
            if touched is None:
                if self._watcher is not None:
                    self._watcher.reset()
                scanned = self._scan()
                self._scanned = True
                changed = [
                    (rel, stamp)
                    for rel, stamp in scanned.items()
                    if (k := self._known.get(rel)) is None or (k[1], k[2]) != stamp
                ]
                removed = [rel for rel in self._known if rel not in scanned]
            else:
                changed, removed = self._stat_touched(touched)
            if changed or removed:
                self._apply(conn, changed, removed)
            total = len(self._known)
        return RefreshStats(total, len(changed), len(removed), time.perf_counter() - start)

    def _apply(
        self,
        conn: sqlite3.Connection,
        changed: list[tuple[str, tuple[int, int]]],
        removed: list[str],
    ) -> None:
        with conn:
            for rel in removed:
                self._forget(conn, rel)
            for rel, (mtime, size) in changed:
                text = self._read(rel)
                if text is None:  # gone, or now a link: what was indexed goes too
                    if rel in self._known:
                        self._forget(conn, rel)
                    continue
                tags = note_tags(text)
                old = self._known.get(rel)
                if old is not None:
                    conn.execute("DELETE FROM notes_fts WHERE rowid=?", (old[0],))
                    conn.execute(
                        "UPDATE notes SET mtime_ns=?, size=?, tags=? WHERE id=?",
                        (mtime, size, " ".join(tags), old[0]),
                    )
                    note_id = old[0]
                else:
                    cur = conn.execute(
                        "INSERT INTO notes(path, mtime_ns, size, tags) VALUES (?, ?, ?, ?)",
                        (rel, mtime, size, " ".join(tags)),
                    )
                    note_id = int(cur.lastrowid or 0)
                conn.execute(
                    "INSERT INTO notes_fts(rowid, path, body) VALUES (?, ?, ?)",
                    (note_id, rel, text),
                )
                self._known[rel] = (note_id, mtime, size)
                self._tags[rel] = tags

    def _forget(self, conn: sqlite3.Connection, rel: str) -> None:
        note_id = self._known.pop(rel)[0]
        self._tags.pop(rel, None)
        conn.execute("DELETE FROM notes WHERE id=?", (note_id,))
        conn.execute("DELETE FROM notes_fts WHERE rowid=?", (note_id,))

    # -- queries (call refresh() first) ------------------------------------------------
    def search(self, keywords: list[str], offset: int = 0, limit: int | None = None) -> SearchPage:
        """Notes containing every keyword (case-insensitive, word boundaries), best first.

        Returns the total number of matches and the notes in [offset, offset + limit).
        """
        if not keywords:
            return SearchPage(0, [])
        phrases = []
        for keyword in keywords:
            tokens = _TOKEN.findall(keyword)
            if tokens:
                phrases.append('"' + " ".join(tokens) + '"')
        query = " AND ".join(phrases)
        end = None if limit is None else offset + limit
        with self._lock:
            conn = self._connect()
            if all(_SIMPLE.fullmatch(k) for k in keywords):
                total = conn.execute(
                    "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?", (query,)
                ).fetchone()[0]
                rows = conn.execute(
                    "SELECT path, body FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rank "
                    "LIMIT ? OFFSET ?",
                    (query, -1 if limit is None else limit, offset),
                ).fetchall()
                return SearchPage(total, [NoteMatch(p, b) for p, b in rows])
            if phrases:
                rows = conn.execute(
                    "SELECT path, body FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rank",
                    (query,),
                ).fetchall()
            else:  # keywords without letters or digits: FTS cannot narrow, check every note
                rows = conn.execute("SELECT path, body FROM notes_fts ORDER BY path").fetchall()
        patterns = [keyword_pattern(k) for k in keywords]
        matches = [
            NoteMatch(path, body)
            for path, body in rows
            if all(p.search(f"{path}\n{body}") for p in patterns)
        ]
        return SearchPage(len(matches), matches[offset:end])

    def notes(self, tag: str | None = None) -> list[tuple[str, list[str]]]:
        """(path, tags) of every note, or of those carrying `tag` (nested tags included)."""
        with self._lock:
            self._connect()
            items = sorted(self._tags.items())
        if tag:
            items = [(p, t) for p, t in items if tag_matches(tag, t)]
        return items

    def recent(self, since_ns: int, limit: int) -> list[str]:
        """The notes changed at or after `since_ns` (as refresh() last saw them), newest
        first, at most `limit`."""
        with self._lock:
            self._connect()
            changed = [(mtime, p) for p, (_, mtime, _) in self._known.items() if mtime >= since_ns]
        return [path for _, path in sorted(changed, reverse=True)[:limit]]

    def paths(self) -> list[str]:
        with self._lock:
            self._connect()
            return sorted(self._known)
