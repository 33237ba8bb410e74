"""The session database as a file: read without writing, and what to tell the user when
SQLite cannot use it.

- `open_read_only`: listing and resuming open `sessions.db` with `mode=ro`: no file is
  created, no schema upgraded, nothing chmodded. A WAL database needs its -shm (and -wal) to
  be read: SQLite creates them, with the database's mode, when the folder is writable, and a
  read-only connection leaves them (the next read-write one removes them). When the folder is
  not writable and there are none, or the -wal is empty, the database file holds every
  committed change and is read as `immutable` instead, for one read at a time.
- `diagnose`: a sqlite3 or OS error sorted into corrupt / locked / access / other, with one
  line naming the file and what to do.
- `holders`: the other processes that have the file or its -wal/-shm open (from /proc).
- `move_aside`: `co-tui sessions --move-aside` renames a damaged database, with its side
  files, to `sessions.db.corrupt-YYYYMMDD-HHMMSS`. Nothing is ever moved without it.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SIDE_FILES = ("-wal", "-shm", "-journal")
MOVE_ASIDE = "co-tui sessions --move-aside"
COMMAND_CHARS = 60

Trouble = Literal["corrupt", "locked", "access", "other"]

# SQLite cannot set up a WAL database's shared index (its folder is not writable).
_WAL_SETUP = (
    "SQLITE_READONLY_DIRECTORY",
    "SQLITE_READONLY_CANTINIT",
    "SQLITE_READONLY_RECOVERY",
    "SQLITE_READONLY_CANTLOCK",
    "SQLITE_CANTOPEN",
)
_PROBE = "SELECT COUNT(*) FROM sqlite_master"  # opens the WAL, reads (checks) the schema


def side_file(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _connect(uri: str, timeout: float) -> sqlite3.Connection:
    return sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False)


def open_read_only(path: Path, timeout: float) -> tuple[sqlite3.Connection, bool] | None:
    """`path` opened for reading only, and whether the connection may be kept (False: it
    reads the file as immutable, so it is good for one read only); None when there is no
    such file. Raises sqlite3.Error (a damaged file, a lock) or OSError (a folder this user
    cannot enter)."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    uri = path.absolute().as_uri()
    conn = _connect(f"{uri}?mode=ro", timeout)
    try:
        conn.execute(_PROBE).fetchone()
        return conn, True
    except sqlite3.OperationalError as exc:
        conn.close()
        if getattr(exc, "sqlite_errorname", "") not in _WAL_SETUP or not _wal_is_empty(path):
            raise
    conn = _connect(f"{uri}?mode=ro&immutable=1", timeout)
    try:
        conn.execute(_PROBE).fetchone()
    except BaseException:
        conn.close()
        raise
    return conn, False


def _wal_is_empty(path: Path) -> bool:
    """True when the database file alone holds every committed change."""
    try:
        return os.stat(side_file(path, "-wal")).st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


# -- what went wrong --
def trouble(exc: BaseException) -> Trouble:
    if isinstance(exc, sqlite3.Error):
        name = getattr(exc, "sqlite_errorname", "") or ""
        text = str(exc)
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text:
            return "corrupt"
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "is locked" in text:
            return "locked"
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")):
            return "access"
        return "other"
    if isinstance(exc, PermissionError) or getattr(exc, "errno", None) == errno.EROFS:
        return "access"
    return "other"


def diagnose(path: Path, exc: BaseException, timeout: float) -> tuple[Trouble, str]:
    """What went wrong with the database at `path`, as one line naming it and what to do."""
    if os.path.isdir(path):
        return "other", (
            f"{path} is a folder ({os.strerror(errno.EISDIR)}), not a database file; move it "
            "away and a new database is started there"
        )
    kind = trouble(exc)
    if kind == "corrupt":
        return kind, corrupt_message(path, exc)
    if kind == "locked":
        return kind, locked_message(path, timeout, holders(path))
    if kind == "access":
        return kind, access_message(path, exc)
    return kind, other_message(path, exc)


def corrupt_message(path: Path, exc: BaseException) -> str:
    return (
        f"{path} is damaged or not a SQLite database ({exc}): the conversations in it cannot "
        f"be read. `{MOVE_ASIDE}` moves it aside to {path.name}.corrupt-YYYYMMDD-HHMMSS (with "
        "its -wal and -shm) and starts a new one"
    )


def locked_message(path: Path, timeout: float, found: list[Holder]) -> str:
    if found:
        who = f"It is open in {', '.join(h.label() for h in found)}: let that program"
    else:
        who = "Another process holds it: let it"
    return f"{path} is locked: still busy after {timeout:g} s. {who} finish or close it, then retry"


def access_message(path: Path, exc: BaseException) -> str:
    """A folder or the file not readable or writable by this user."""
    blocked = _unenterable(path)
    if blocked is not None:
        return (
            f"cannot open {path}: this user cannot enter the folder {blocked}"
            f"{_owner(blocked)}; give your user access to it"
        )
    if not _exists(path):
        parent = _existing_parent(path)
        return (
            f"cannot create {path}: the folder {parent}{_owner(parent)} is not writable by "
            f"this user; make it writable by you{_elsewhere()}"
        )
    if not os.access(path, os.R_OK):
        return (
            f"{path} cannot be read by this user{_owner(path)}; give your user read and write "
            "access to it (it should be yours, mode 0600)"
        )
    folder_closed = not os.access(path.parent, os.W_OK)
    if folder_closed and not _wal_is_empty(path) and not _exists(side_file(path, "-shm")):
        return (
            f"{path} cannot be read by this user: its latest changes (in its -wal) need a -shm "
            f"file that its folder{_owner(path.parent)} does not let this user create; give "
            "your user write access to the folder, or have its owner run co-tui once"
        )
    unwritable = [p for p in (path, path.parent) if not os.access(p, os.W_OK)]
    if unwritable:
        names = " and its folder" if len(unwritable) == 2 else ""
        what = f"{unwritable[0]}{_owner(unwritable[0])}{names}"
        return (
            f"{path} is read-only for this user: sessions can be listed and resumed but not "
            f"saved. To save, give your user write access to {what}"
        )
    return f"{path}: {exc}"


def other_message(path: Path, exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOTDIR, errno.EEXIST):
        parent = _existing_parent(path)
        return (
            f"cannot create {path}: {parent} is a file where a folder should be; move it "
            f"away{_elsewhere()}"
        )
    if isinstance(exc, OSError):
        return f"cannot use {path}: {exc.strerror or exc}"
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_FULL"):
        return f"{path}: the disk is full; free some space, then try again"
    if name.startswith("SQLITE_IOERR"):
        return f"{path}: {exc}; check the disk and the file, then try again"
    return f"{path}: {exc}"


def _exists(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError:
        return False
    return True


def _existing_parent(path: Path) -> Path:
    """The nearest ancestor of `path` that exists (what the missing folders go into)."""
    return next((p for p in path.parents if _exists(p)), path.parent)


def _unenterable(path: Path) -> Path | None:
    """The first existing folder on the way to `path` this user cannot enter."""
    for folder in reversed(path.parents):
        if not _exists(folder):
            return None
        if not os.access(folder, os.X_OK):
            return folder
    return None


def _owner(path: Path) -> str:
    """' (owned by root)' when someone else owns `path`."""
    try:
        uid = os.stat(path).st_uid
    except OSError:
        return ""
    if uid == os.geteuid():
        return ""
    try:
        import pwd

        name = pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        name = f"uid {uid}"
    return f" (owned by {name})"


def _elsewhere() -> str:
    if os.name == "posix" and sys.platform != "darwin":
        return ", or set XDG_DATA_HOME to a folder you own"
    return ""


# -- who has it open --
@dataclass(frozen=True)
class Holder:
    pid: int
    command: str

    def label(self) -> str:
        return f"pid {self.pid} ({self.command})" if self.command else f"pid {self.pid}"


def holders(path: Path) -> list[Holder]:
    """Other processes with the database or its side files open: those whose /proc/<pid>/fd
    this user may read (Linux; elsewhere none are found)."""
    targets = {os.path.realpath(p) for p in (path, *(side_file(path, s) for s in SIDE_FILES))}
    found: list[Holder] = []
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return found
    me = os.getpid()
    for name in entries:
        pid = int(name)
        if pid != me and _has_open(pid, targets):
            found.append(Holder(pid, _command(pid)))
    return sorted(found, key=lambda h: h.pid)


def _has_open(pid: int, targets: set[str]) -> bool:
    try:
        with os.scandir(f"/proc/{pid}/fd") as fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) in targets:
                        return True
                except OSError:
                    continue
    except OSError:  # gone, or another user's
        return False
    return False


def _command(pid: int) -> str:
    from co_tui.safety.visible import visible

    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    text = visible(" ".join(raw.decode(errors="replace").replace("\0", " ").split()), keep="")
    return text if len(text) <= COMMAND_CHARS else text[: COMMAND_CHARS - 1] + "…"


# -- moving a damaged database aside --
def move_aside(path: Path, now: float | None = None) -> Path:
    """Rename `path` and its side files to `<name>.corrupt-YYYYMMDD-HHMMSS[-n]<suffix>`;
    the new name of `path`. Raises OSError (nothing is moved when the first rename fails)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    backup = path.with_name(f"{path.name}.corrupt-{stamp}")
    count = 1
    while _exists(backup) or any(_exists(side_file(backup, s)) for s in SIDE_FILES):
        count += 1
        backup = path.with_name(f"{path.name}.corrupt-{stamp}-{count}")
    os.rename(path, backup)
    for suffix in SIDE_FILES:
        source = side_file(path, suffix)
        if _exists(source):
            os.rename(source, side_file(backup, suffix))
    return backup
