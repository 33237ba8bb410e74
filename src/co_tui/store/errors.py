"""What can go wrong with the session store, each with a message that names the file and what
to do.
"""

from __future__ import annotations

from pathlib import Path


class SessionError(Exception):
    """A session cannot be opened. The message is one line, ready to show."""


class SessionNotFound(SessionError):
    pass


class SessionFormatError(SessionError):
    pass


class SessionStoreError(SessionError):
    """SQLite cannot use the database file: the message names it and what to do."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


class SessionDatabaseCorrupt(SessionStoreError):
    """Not a SQLite database, or a damaged one: `co-tui sessions --move-aside` (only)."""


class SessionDatabaseLocked(SessionStoreError):
    """Another process held the lock for longer than the busy timeout."""


class SessionDatabaseAccess(SessionStoreError):
    """The file or a folder on its way is not readable (or writable) by this user. A
    read-only database can still be listed and resumed."""


class SessionConflict(SessionError):
    """Another writer saved the session since this one read it."""

    def __init__(self, session_id: str, writer_pid: int | None) -> None:
        who = f"another co-tui (pid {writer_pid})" if writer_pid else "another co-tui"
        super().__init__(f"{who} saved session {session_id[:8]} since this one opened it")
        self.session_id = session_id
        self.writer_pid = writer_pid
