"""Read files and list folders strictly inside a root, never through a symbolic link.

The root itself is trusted (the workspace, the user's config dir, the vault the user
configured) and may be a link. Below it, every component of the relative path is opened
with O_NOFOLLOW relative to its parent's file descriptor, so a link anywhere under the
root (`AGENTS.md -> ~/.ssh/id_rsa`, `knowledge -> /etc`) is refused, and so is a file
swapped for a link between any check and the open: there is no second lookup by name.
The file opened must be a regular file (not a FIFO, device or socket) under a size cap.

The rule is simple on purpose: every symbolic link is refused, including one that points
back inside its root. Hard links cannot be told apart from the file they share by path;
one to a file owned by another user (st_nlink > 1, owner not us) is refused, one to our
own file is read, since whoever made it could have copied the file just as well.

Needs a POSIX system (open with dir_fd, O_NOFOLLOW, O_DIRECTORY).
"""

from __future__ import annotations

import builtins
import codecs
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Literal, Protocol

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO swapped in after the check must not hang; O_NOCTTY: a tty
# never becomes our controlling terminal.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CHUNK = 65_536

LINK = "is a symbolic link; links are not followed, so nothing outside its folder is read"
NOT_REGULAR = "is not a regular file"
HARD_LINK = "is a hard link to a file owned by another user"
LEAVES_ROOT = "leaves its folder ('..' or an absolute path)"
MISSING = "does not exist"
NOT_UTF8 = "is not UTF-8 text"

Kind = Literal["file", "dir", "link", "other"]


class ReadRefused(Exception):
    """The file was not read. `reason` reads after its name ("AGENTS.md is a symbolic
    link; ..."); `str()` is "<path>: <reason>", one line."""

    def __init__(self, root: Path, relative: str, reason: str) -> None:
        self.root = root
        self.relative = relative
        self.reason = reason
        self.path = root / relative if relative else root
        super().__init__(f"{self.path}: {reason}")


class NotFound(ReadRefused):
    """Nothing of that name (or a parent is not a folder): usually not worth reporting."""


@dataclass(frozen=True)
class Listed:
    name: str
    kind: Kind  # a link is reported as a link, never as what it points to


def _strerror(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _parts(root: Path, relative: str | PurePath) -> list[str]:
    text = relative.as_posix() if isinstance(relative, PurePath) else relative
    if "\0" in text:
        raise ReadRefused(root, text.replace("\0", "\\0"), "contains a NUL byte")
    if text.startswith("/"):
        raise ReadRefused(root, text, LEAVES_ROOT)
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ReadRefused(root, text, LEAVES_ROOT)
    return parts


def _why(dir_fd: int, name: str, exc: OSError) -> str | None:
    """The reason `name` could not be opened; None when it simply is not there."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return LINK
    return f"cannot be opened ({_strerror(exc)})"


def _open_root(root: Path) -> int:
    try:
        return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise NotFound(root, "", MISSING) from None
    except OSError as exc:
        raise ReadRefused(root, "", f"cannot be opened ({_strerror(exc)})") from None


def _descend(root: Path, parts: list[str]) -> int:
    """An fd of root/parts, every component opened without following links."""
    fd = _open_root(root)
    for i, part in enumerate(parts):
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            reason = _why(fd, part, exc)
            os.close(fd)
            shown = "/".join(parts[: i + 1])
            if reason is None or (isinstance(exc, NotADirectoryError) and reason != LINK):
                raise NotFound(root, shown, MISSING) from None
            raise ReadRefused(root, shown, reason) from None
        os.close(fd)
        fd = child
    return fd


def _check_regular(root: Path, rel: str, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise ReadRefused(root, rel, LINK)
    if not stat.S_ISREG(st.st_mode):
        raise ReadRefused(root, rel, NOT_REGULAR)
    if st.st_nlink > 1 and st.st_uid != os.geteuid():
        raise ReadRefused(root, rel, HARD_LINK)


def _open_file(root: Path, parts: list[str]) -> int:
    rel = "/".join(parts)
    if not parts:
        raise ReadRefused(root, rel, NOT_REGULAR)
    dir_fd = _descend(root, parts[:-1])
    name = parts[-1]
    try:
        try:  # look first, so a FIFO or device is never opened at all
            _check_regular(root, rel, os.stat(name, dir_fd=dir_fd, follow_symlinks=False))
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(root, rel, MISSING) from None
        except OSError as exc:
            reason = _why(dir_fd, name, exc)
            if reason is None:
                raise NotFound(root, rel, MISSING) from None
            raise ReadRefused(root, rel, reason) from None
    finally:
        os.close(dir_fd)
    try:  # and check again what was actually opened: it may have been swapped meanwhile
        _check_regular(root, rel, os.fstat(fd))
    except ReadRefused:
        os.close(fd)
        raise
    return fd


def read_open_file(fd: int, limit: int) -> bytes:
    """Up to `limit` + 1 bytes of an open file (one byte more than allowed tells that it is
    too large, whatever its size said). Raises OSError."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_bytes_within(
    root: Path, relative: str | PurePath, *, limit: int, truncate: bool = False
) -> bytes:
    """The bytes of root/relative, refusing links, non-regular files and anything larger
    than `limit` bytes (with `truncate`, its first `limit` bytes instead)."""
    parts = _parts(root, relative)
    fd = _open_file(root, parts)
    rel = "/".join(parts)
    try:
        if not truncate and os.fstat(fd).st_size > limit:
            raise ReadRefused(root, rel, f"is too large (over {limit:,} bytes)")
        data = read_open_file(fd, limit)
    except OSError as exc:
        raise ReadRefused(root, rel, f"cannot be read ({_strerror(exc)})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        if not truncate:  # it grew after the size check
            raise ReadRefused(root, rel, f"is too large (over {limit:,} bytes)")
        data = data[:limit]
    return data


def read_text_within(
    root: Path,
    relative: str | PurePath,
    *,
    limit: int,
    truncate: bool = False,
    errors: Literal["strict", "replace"] = "strict",
) -> str:
    """read_bytes_within decoded as UTF-8; with errors="strict", bad UTF-8 is refused (a
    character cut in half by `truncate` is dropped, not an error)."""
    data = read_bytes_within(root, relative, limit=limit, truncate=truncate)
    try:
        return decode_text(data, truncated=truncate and len(data) >= limit, errors=errors)
    except UnicodeDecodeError:
        raise ReadRefused(root, "/".join(_parts(root, relative)), NOT_UTF8) from None


def _kind(entry: os.DirEntry[str]) -> Kind:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


def list_within(root: Path, relative: str | PurePath = "") -> list[Listed]:
    """The entries of the folder root/relative, sorted by name; links are listed as links."""
    fd = _descend(root, _parts(root, relative))
    try:
        with os.scandir(fd) as entries:
            return sorted((Listed(e.name, _kind(e)) for e in entries), key=lambda e: e.name)
    except OSError as exc:
        reason = f"cannot be listed ({_strerror(exc)})"
        raise ReadRefused(root, "/".join(_parts(root, relative)), reason) from None
    finally:
        os.close(fd)


def walk_within(
    root: Path,
    relative: str | PurePath = "",
    *,
    descend: Callable[[str], bool] = lambda name: True,
    on_enter: Callable[[str], object] | None = None,
) -> Iterator[tuple[str, list[os.DirEntry[str]]]]:
    """Every folder under root/relative, top first, as (prefix, entries sorted by name): the
    prefix is the folder's path below `relative` ("" for the top, else ending in "/").
    Only real folders are entered, each through its parent's fd without following links,
    and only those whose name passes `descend`; `on_enter(prefix)` runs before a folder is
    listed. Entries may be stat()ed (follow_symlinks=False) until the iterator moves on.
    A folder that cannot be opened or listed (gone, or swapped for a link) is skipped."""
    stack: list[tuple[int, str, Iterator[str]]] = []
    fd, prefix = _descend(root, _parts(root, relative)), ""
    try:
        while True:
            stack.append((fd, prefix, iter(())))
            if on_enter is not None:
                on_enter(prefix)
            try:
                with os.scandir(fd) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                entries = None
            if entries is not None:
                yield prefix, entries
                names = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
                stack[-1] = (fd, prefix, iter([n for n in names if descend(n)]))
            child = _next_folder(stack)
            if child is None:
                return
            fd, prefix = child
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _next_folder(stack: list[tuple[int, str, Iterator[str]]]) -> tuple[int, str] | None:
    """Open the next folder to walk (depth first), closing the ones that are done."""
    while stack:
        fd, prefix, names = stack[-1]
        name = next(names, None)
        if name is None:
            os.close(fd)
            stack.pop()
            continue
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd), f"{prefix}{name}/"
        except OSError:
            continue
    return None


class Folder(Protocol):
    """A root to read files from: the disk through the functions above (`DiskFolder`), or
    the bytes of a project read once (co_tui.config.trust.project_files.ProjectFiles)."""

    @property
    def root(self) -> Path: ...

    def list(self, relative: str | PurePath = "") -> list[Listed]:
        """As list_within."""
        ...

    def read_bytes(self, relative: str | PurePath, *, limit: int, truncate: bool = False) -> bytes:
        """As read_bytes_within."""
        ...

    def read_text(
        self,
        relative: str | PurePath,
        *,
        limit: int,
        truncate: bool = False,
        errors: Literal["strict", "replace"] = "strict",
    ) -> str:
        """As read_text_within."""
        ...

    def files_below(
        self, relative: str | PurePath, descend: Callable[[str], bool]
    ) -> builtins.list[str]:
        """The regular files below root/relative (paths below it), entering only folders
        whose name passes `descend`; links and other kinds left out."""
        ...


@dataclass(frozen=True)
class DiskFolder:
    """A folder on disk, read only through this module's functions."""

    root: Path

    def list(self, relative: str | PurePath = "") -> list[Listed]:
        return list_within(self.root, relative)

    def read_bytes(self, relative: str | PurePath, *, limit: int, truncate: bool = False) -> bytes:
        return read_bytes_within(self.root, relative, limit=limit, truncate=truncate)

    def read_text(
        self,
        relative: str | PurePath,
        *,
        limit: int,
        truncate: bool = False,
        errors: Literal["strict", "replace"] = "strict",
    ) -> str:
        return read_text_within(self.root, relative, limit=limit, truncate=truncate, errors=errors)

    def files_below(
        self, relative: str | PurePath, descend: Callable[[str], bool]
    ) -> builtins.list[str]:
        found: list[str] = []
        for prefix, entries in walk_within(self.root, relative, descend=descend):
            found += [prefix + e.name for e in entries if e.is_file(follow_symlinks=False)]
        return found


def decode_text(
    data: bytes, *, truncated: bool, errors: Literal["strict", "replace"] = "strict"
) -> str:
    """UTF-8 text of `data`; a character cut in half at the end of a truncated read is
    dropped, not an error. Raises UnicodeDecodeError (errors="strict")."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    return decoder.decode(data, final=not truncated)
