"""Drafts: what the prompt holds and has not sent, kept on disk per session.

A crash, a closed terminal or `kill -9` must not lose what was typed: the app keeps the
prompt's text (with its folded pastes, and the messages queued behind a running turn) in
`<data>/drafts/<session id>.json` while it is typed, and deletes the file once everything
in it is sent. Resuming the session (`--continue`, `--resume`, `/resume`) puts it back in the
prompt; a draft of a session that was never stored (nothing was sent) comes back in the
next new session started in the same folder.

The file is redacted as the prompt history is (configured secrets and credential shapes
become [REDACTED]), created 0600 in a 0700 folder, and never reached through a symbolic
link: the folder is opened without following links and the file is written beside the old
one and renamed over it (a link planted at its name is replaced, never written through);
reading refuses a link (co_tui/safety/safe_read.py). Whoever wrote a file is recorded (its
process id), so a window still open elsewhere keeps its own draft.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from co_tui.safety.private_files import DIR_MODE, FILE_MODE, private_dir
from co_tui.safety.redaction import Redactor, shared_redactor
from co_tui.safety.safe_read import NotFound, ReadRefused, list_within, read_text_within

FOLDER = "drafts"
SUFFIX = ".json"
FORMAT = 1
MAX_BYTES = 32 * 1024 * 1024  # a draft with a few large pastes; more is not a draft
_SESSION_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z-]{0,63}")
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class DraftError(Exception):
    """A draft could not be kept or read; the message names the file and why (one line)."""


@dataclass(frozen=True)
class Pasted:
    """A large paste folded into the prompt as `label` (one line); `text` is what is sent."""

    label: str
    text: str


@dataclass(frozen=True)
class Draft:
    text: str = ""
    pastes: tuple[Pasted, ...] = ()  # those whose label is in `text` or `queued`
    queued: tuple[str, ...] = ()  # sent behind a running turn, not yet dispatched

    @property
    def empty(self) -> bool:
        return not self.text.strip() and not self.queued


@dataclass(frozen=True)
class StoredDraft:
    session_id: str
    draft: Draft
    cwd: str
    pid: int

    @property
    def ours(self) -> bool:
        """Written by this process: the prompt holds it already."""
        return self.pid == os.getpid()

    @property
    def writer_alive(self) -> bool:
        """Another co-tui process that wrote it is still running (it keeps the draft)."""
        if self.ours:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except OSError:  # someone else's process: not a co-tui of ours
            return False
        return True


def file_name(session_id: str) -> str:
    if not _SESSION_ID.fullmatch(session_id):
        raise DraftError(f"{session_id!r} is not a session id a draft can be named after")
    return session_id + SUFFIX


class DraftStore:
    """The drafts folder in `data_dir` (the app's data folder, trusted: it may be a link)."""

    def __init__(self, data_dir: Path, redactor: Redactor | None = None) -> None:
        self.data_dir = data_dir
        self.folder = data_dir / FOLDER
        self._redactor = redactor
        self._clean: dict[str, str] = {}  # paste text -> redacted: a paste never changes

    def path(self, session_id: str) -> Path:
        return self.folder / file_name(session_id)

    # -- writing --
    def save(self, session_id: str, draft: Draft, cwd: Path) -> None:
        """Keep `draft` (redacted) as the draft of `session_id`; an empty one is deleted.
        Raises DraftError."""
        if draft.empty:
            self.discard(session_id)
            return
        name = file_name(session_id)
        data = self._encode(draft, cwd)
        try:
            folder = self._open_folder(create=True)
            try:
                _replace(folder, name, data)
            finally:
                os.close(folder)
        except OSError as exc:
            why = _why(exc)
            raise DraftError(f"cannot keep the draft in {self.folder / name}: {why}") from None

    def discard(self, session_id: str) -> None:
        """Delete the draft of `session_id` (a link at its name is removed, not followed).
        Raises DraftError."""
        name = file_name(session_id)
        if not self.data_dir.is_dir():  # no data folder (or a file in its place): no draft
            return
        try:
            folder = self._open_folder(create=False)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise DraftError(f"cannot delete the draft {self.folder / name}: {_why(exc)}") from None
        try:
            os.unlink(name, dir_fd=folder)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise DraftError(f"cannot delete the draft {self.folder / name}: {_why(exc)}") from None
        finally:
            os.close(folder)

    def _open_folder(self, *, create: bool) -> int:
        if create:
            private_dir(self.data_dir)
        root = os.open(self.data_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(FOLDER, DIR_MODE, dir_fd=root)
            return os.open(FOLDER, _FOLDER_FLAGS, dir_fd=root)
        finally:
            os.close(root)

    def _encode(self, draft: Draft, cwd: Path) -> bytes:
        redact = (self._redactor or shared_redactor()).text
        clean = {p.text: self._clean.get(p.text) or redact(p.text) for p in draft.pastes}
        self._clean = clean  # only the pastes still in the draft stay cached
        record = {
            "format": FORMAT,
            "pid": os.getpid(),
            "cwd": str(cwd),
            "text": redact(draft.text),
            "pastes": [[p.label, clean[p.text]] for p in draft.pastes],
            "queued": [redact(q) for q in draft.queued],
        }
        return json.dumps(record, ensure_ascii=False).encode("utf-8")

    # -- reading --
    def load(self, session_id: str) -> StoredDraft | None:
        """The draft kept for `session_id`, None when there is none. Raises DraftError (a
        link at its name, a file that is not a draft)."""
        name = file_name(session_id)
        try:
            raw = read_text_within(self.data_dir, f"{FOLDER}/{name}", limit=MAX_BYTES)
        except NotFound:
            return None
        except ReadRefused as exc:
            raise DraftError(f"the draft {exc}; it was not read") from None
        stored = _decode(session_id, raw)
        if stored is None:
            raise DraftError(f"the draft {self.folder / name} is not a draft co-tui can read")
        return stored

    def unclaimed(self, cwd: Path, stored: Callable[[str], bool]) -> StoredDraft | None:
        """The newest draft left in `cwd` by a session that was never stored (`stored(id)`
        is False) and whose writer is gone: the next new session there takes it."""
        try:
            names = [e.name for e in list_within(self.data_dir, FOLDER) if e.kind == "file"]
        except ReadRefused:
            return None
        for session_id in self._newest_first(names):
            try:
                found = self.load(session_id)
            except DraftError:
                continue
            if found is None or found.cwd != str(cwd) or found.ours:
                continue  # another folder's, or this process's own
            if found.writer_alive or found.draft.empty:
                continue
            if not stored(session_id):
                return found
        return None

    def _newest_first(self, names: Iterable[str]) -> list[str]:
        dated: list[tuple[float, str]] = []
        for name in names:
            session_id = name.removesuffix(SUFFIX)
            if name == session_id or not _SESSION_ID.fullmatch(session_id):
                continue
            with contextlib.suppress(OSError):
                dated.append((os.lstat(self.folder / name).st_mtime, session_id))
        return [session_id for _, session_id in sorted(dated, reverse=True)]


def _replace(folder: int, name: str, data: bytes) -> None:
    """Write `data` to a new file beside `name` and rename it over `name`: a reader never
    sees half a draft, and whatever was at `name` (a link, say) is replaced, not written."""
    temporary = f".{name}.{os.getpid()}.tmp"
    try:
        fd = os.open(temporary, _NEW_FILE_FLAGS, FILE_MODE, dir_fd=folder)
    except FileExistsError:  # left by a crash of this same process id: never followed
        os.unlink(temporary, dir_fd=folder)
        fd = os.open(temporary, _NEW_FILE_FLAGS, FILE_MODE, dir_fd=folder)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise
    os.close(fd)
    os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)


def _decode(session_id: str, raw: str) -> StoredDraft | None:
    try:
        record = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        return None
    text, pastes, queued = record.get("text"), record.get("pastes"), record.get("queued")
    cwd, pid = record.get("cwd"), record.get("pid")
    if not (isinstance(text, str) and isinstance(cwd, str) and isinstance(pid, int)):
        return None
    if not (_strings(queued) and isinstance(pastes, list)):
        return None
    if not all(isinstance(p, list) and len(p) == 2 and _strings(p) for p in pastes):
        return None
    draft = Draft(text, tuple(Pasted(label, body) for label, body in pastes), tuple(queued))
    return StoredDraft(session_id, draft, cwd, pid)


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _why(exc: OSError) -> str:
    if exc.errno == getattr(os, "ELOOP", None) or isinstance(exc, NotADirectoryError):
        return f"{FOLDER} is a symbolic link or not a folder; links are not followed"
    return exc.strerror or type(exc).__name__
