"""What co-tui keeps on disk is readable by its user only: folders 0700, files 0600.

Files are created with those modes (never created wider, then narrowed) and
config/data_at_rest.py narrows what older versions left wider, once at start. Nothing here
touches the process umask: commands the assistant runs create workspace files with the
user's usual modes.

SQLite creates a database's -wal, -shm and -journal files with the database file's mode, so
a database created 0600 keeps them 0600; `open_private_db` narrows existing ones too.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3  # imported when a database is opened: not needed for the first frame

DIR_MODE = 0o700  # also what the XDG base directory spec asks of folders it creates
FILE_MODE = 0o600
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def private_dir(path: Path) -> Path:
    """Create `path` and every missing parent 0700. Existing folders are left as they are
    (config/data_at_rest.py narrows the data folder)."""
    missing: list[Path] = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, DIR_MODE)  # exactly 0700, whatever the umask took away
    return path


def _narrow(fd: int) -> None:
    if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
        os.fchmod(fd, FILE_MODE)


def private_file(path: Path) -> Path:
    """Create `path` empty and 0600 (its folder 0700) if missing; narrow it to 0600 if not."""
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
    try:
        _narrow(fd)
    finally:
        os.close(fd)
    return path


def open_private(path: Path, mode: str = "a") -> IO[str]:
    """Open a text file for appending ("a") or replacing ("w"), created 0600."""
    flags = {"a": os.O_APPEND, "w": os.O_TRUNC}[mode]
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | flags, FILE_MODE)
    try:
        _narrow(fd)
        return os.fdopen(fd, mode, encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def narrow_side_files(db_path: Path) -> None:
    for suffix in SQLITE_SIDE_FILES:
        chmod_owned(db_path.with_name(db_path.name + suffix), FILE_MODE)


def open_private_db(path: Path, timeout: float) -> sqlite3.Connection:
    """A SQLite database in WAL mode whose file, -wal and -shm are 0600 (its folder 0700)."""
    import sqlite3

    private_file(path)
    conn = sqlite3.connect(path, check_same_thread=False, timeout=timeout)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    except BaseException:  # not a database, locked, read-only: nothing is left open
        conn.close()
        raise
    narrow_side_files(path)
    return conn


def chmod_owned(path: Path | str, mode: int, st: os.stat_result | None = None) -> None:
    """Narrow one regular file or folder we own; links and others' files are left alone.
    `st`: the path's lstat, when the caller has it."""
    if st is None:
        try:
            st = os.lstat(path)
        except OSError:
            return
    if stat.S_ISLNK(st.st_mode) or stat.S_IMODE(st.st_mode) == mode:
        return
    if st.st_uid != os.geteuid() and os.geteuid() != 0:
        return
    with contextlib.suppress(OSError, NotImplementedError):
        os.chmod(path, mode, follow_symlinks=False)


def narrow_tree(root: Path) -> None:
    """`root` and the folders under it 0700, every regular file 0600; links not followed."""
    if not root.is_dir() or root.is_symlink():
        return
    chmod_owned(root, DIR_MODE)
    folders = [os.fspath(root)]
    while folders:  # one lstat an entry (scandir keeps it): this runs before the first frame
        try:
            with os.scandir(folders.pop()) as scan:
                entries = list(scan)
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            is_folder = stat.S_ISDIR(st.st_mode)  # a link is not (never followed)
            chmod_owned(entry.path, DIR_MODE if is_folder else FILE_MODE, st)
            if is_folder:
                folders.append(entry.path)
