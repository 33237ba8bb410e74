"""Every file co-tui reads from a project, read once: what the user trusts is what loads.

`read_project_files(root)` reads, through co_tui.safety.safe_read (no links out, regular files
only, so no FIFO or device, a size cap), each file a project can ship for co-tui: its
settings, its instructions (AGENTS.md, .co-tui/instructions.md), its knowledge, commands and
skills. The bytes are kept. A trust decision is stored for their digest, and every loader
reads the project through the `ProjectFiles` it got (a `safe_read.Folder`), never the disk
again: a file changed while the trust dialog was open is not what loads, and the dialog
shows exactly the text that would.

What could not be read is kept with the reason (`refused`), so the loaders report it as
they did reading the disk. Over MAX_FILES files or MAX_TOTAL_BYTES in all, the rest is not
read and says so.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Literal

from co_tui.config.paths import PROJECT_DIR_NAME, SETTINGS_FILE_NAME
from co_tui.safety.safe_read import (
    NOT_UTF8,
    Kind,
    Listed,
    NotFound,
    ReadRefused,
    decode_text,
    list_within,
    read_bytes_within,
)

SETTINGS = f"{PROJECT_DIR_NAME}/{SETTINGS_FILE_NAME}"
INSTRUCTIONS = ("AGENTS.md", f"{PROJECT_DIR_NAME}/instructions.md")
KNOWLEDGE = f"{PROJECT_DIR_NAME}/knowledge"
COMMANDS = f"{PROJECT_DIR_NAME}/commands"
SKILLS = f"{PROJECT_DIR_NAME}/skills"
MAX_FILE_BYTES = 256_000  # the most any loader reads of one file
MAX_FILES = 300
MAX_TOTAL_BYTES = 8_000_000
MAX_DEPTH = 6  # folders below .co-tui/skills


@dataclass(frozen=True)
class Refusal:
    kind: Kind  # what was there: a link, something else, a file too large
    reason: str  # as safe_read words it: "is a symbolic link; ..."


@dataclass(frozen=True)
class ProjectFiles:
    """The project's files as read once: a `safe_read.Folder` over their bytes."""

    root: Path
    files: Mapping[str, bytes] = field(default_factory=dict)  # relative path -> bytes
    truncated: frozenset[str] = frozenset()  # files longer than MAX_FILE_BYTES
    refused: Mapping[str, Refusal] = field(default_factory=dict)
    folders: frozenset[str] = frozenset()  # every folder listed, empty ones included

    @property
    def empty(self) -> bool:
        return not self.files and not self.refused

    @property
    def digest(self) -> str:
        """SHA-256 over every file's path and bytes: what a trust decision is stored for."""
        sha = hashlib.sha256()
        for rel in sorted(self.files):
            data = self.files[rel]
            sha.update(f"{rel}\0{len(data)}\0".encode())
            sha.update(data)
        return sha.hexdigest()

    def has_any(self, folder: str) -> bool:
        return any(rel.startswith(f"{folder}/") for rel in self.files)

    def text(self, rel: str) -> str | None:
        """A file's text for showing it (bad UTF-8 replaced); None when not read."""
        data = self.files.get(rel)
        return None if data is None else decode_text(data, truncated=True, errors="replace")

    # -- safe_read.Folder --
    def list(self, relative: str | PurePath = "") -> list[Listed]:
        rel = _normal(relative)
        self._refused_at_or_above(rel)
        prefix = f"{rel}/" if rel else ""
        kinds: dict[str, Kind] = {}
        for path in [*self.files, *self.refused, *self.folders]:
            if not path.startswith(prefix) or path == rel:
                continue
            name, _, rest = path[len(prefix) :].partition("/")
            kinds[name] = "dir" if rest or path in self.folders else self._kind(path)
        if not kinds and rel not in self.folders:
            raise NotFound(self.root, rel, "does not exist")
        return [Listed(name, kinds[name]) for name in sorted(kinds)]

    def read_bytes(self, relative: str | PurePath, *, limit: int, truncate: bool = False) -> bytes:
        rel = _normal(relative)
        self._refused_at_or_above(rel)
        data = self.files.get(rel)
        if data is None:
            raise NotFound(self.root, rel, "does not exist")
        cut_short = rel in self.truncated
        if len(data) > limit or (cut_short and not truncate):
            if not truncate:
                raise ReadRefused(self.root, rel, f"is too large (over {limit:,} bytes)")
            data = data[:limit]
        return data

    def read_text(
        self,
        relative: str | PurePath,
        *,
        limit: int,
        truncate: bool = False,
        errors: Literal["strict", "replace"] = "strict",
    ) -> str:
        data = self.read_bytes(relative, limit=limit, truncate=truncate)
        cut = truncate and (len(data) >= limit or _normal(relative) in self.truncated)
        try:
            return decode_text(data, truncated=cut, errors=errors)
        except UnicodeDecodeError:
            raise ReadRefused(self.root, _normal(relative), NOT_UTF8) from None

    def files_below(
        self, relative: str | PurePath, descend: Callable[[str], bool]
    ) -> builtins.list[str]:
        rel = _normal(relative)
        prefix = f"{rel}/" if rel else ""
        found = []
        for path in self.files:
            if path.startswith(prefix):
                below = path[len(prefix) :]
                if all(descend(part) for part in below.split("/")[:-1]):
                    found.append(below)
        return sorted(found, key=lambda p: p.split("/"))

    def _kind(self, rel: str) -> Kind:
        refusal = self.refused.get(rel)
        return refusal.kind if refusal is not None else "file"

    def _refused_at_or_above(self, rel: str) -> None:
        """Raise the refusal of `rel` or of a folder it is in (a linked `.co-tui`)."""
        parts = rel.split("/") if rel else []
        for i in range(1, len(parts) + 1):
            refusal = self.refused.get("/".join(parts[:i]))
            if refusal is not None:
                raise ReadRefused(self.root, "/".join(parts[:i]), refusal.reason)


@dataclass(frozen=True)
class ProjectView:
    """The project as a session reads it: its files as read once, and whether the user
    trusts them (untrusted: instructions and knowledge are untrusted text; commands and
    skills are left out)."""

    files: ProjectFiles
    trusted: bool

    @property
    def root(self) -> Path:
        return self.files.root


def _normal(relative: str | PurePath) -> str:
    text = relative.as_posix() if isinstance(relative, PurePath) else relative
    return "/".join(p for p in text.split("/") if p not in ("", "."))


def _hidden(name: str) -> bool:
    return name.startswith((".", "__"))


class _Reader:
    """Reads the project's files into memory within the limits."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, bytes] = {}
        self.truncated: set[str] = set()
        self.refused: dict[str, Refusal] = {}
        self.folders: set[str] = set()
        self.total = 0

    def file(self, rel: str) -> None:
        if len(self.files) >= MAX_FILES or self.total >= MAX_TOTAL_BYTES:
            reason = f"was not read: the project's files pass {MAX_FILES} files or "
            self.refused[rel] = Refusal("file", reason + f"{MAX_TOTAL_BYTES:,} bytes in all")
            return
        try:
            data = read_bytes_within(self.root, rel, limit=MAX_FILE_BYTES + 1, truncate=True)
        except NotFound:
            return
        except ReadRefused as exc:
            where = exc.relative or rel
            self.refused[where] = Refusal(self._kind_of(where), exc.reason)
            return
        if len(data) > MAX_FILE_BYTES:
            data = data[:MAX_FILE_BYTES]
            self.truncated.add(rel)
        self.files[rel] = data
        self.total += len(data)

    def folder(self, rel: str, suffix: str) -> None:
        for name, kind in self._entries(rel):
            if name.endswith(suffix) and kind != "dir":
                self.file(f"{rel}/{name}")

    def tree(self, rel: str, depth: int = 0) -> None:
        for name, kind in self._entries(rel):
            if _hidden(name):
                continue
            path = f"{rel}/{name}"
            if kind == "dir" and depth < MAX_DEPTH:
                self.tree(path, depth + 1)
            elif kind != "dir":
                self.file(path)

    def _entries(self, rel: str) -> Iterator[tuple[str, Kind]]:
        try:
            listed = list_within(self.root, rel)
        except NotFound:
            return
        except ReadRefused as exc:
            self.refused[exc.relative or rel] = Refusal(self._kind_of(exc.relative), exc.reason)
            return
        self.folders.add(rel)
        for entry in listed:
            yield entry.name, entry.kind

    def _kind_of(self, rel: str) -> Kind:
        try:
            mode = os.lstat(self.root / rel).st_mode
        except OSError:
            return "other"
        if stat.S_ISLNK(mode):
            return "link"
        return "file" if stat.S_ISREG(mode) else ("dir" if stat.S_ISDIR(mode) else "other")


def read_project_files(root: Path) -> ProjectFiles:
    """Every file the project at `root` ships for co-tui, read once (see the module)."""
    reader = _Reader(root)
    reader.file(SETTINGS)
    for rel in INSTRUCTIONS:
        reader.file(rel)
    reader.folder(KNOWLEDGE, ".md")
    reader.folder(COMMANDS, ".md")
    reader.tree(SKILLS)
    folders = {f for f in reader.folders if f}
    # The parents of every folder read are folders too (listing them must find the way down).
    for folder in list(folders):
        parts = folder.split("/")
        folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return ProjectFiles(
        root,
        dict(reader.files),
        frozenset(reader.truncated),
        dict(reader.refused),
        frozenset(folders),
    )


__all__ = [
    "COMMANDS",
    "INSTRUCTIONS",
    "KNOWLEDGE",
    "SETTINGS",
    "SKILLS",
    "ProjectFiles",
    "ProjectView",
    "Refusal",
    "read_project_files",
]
