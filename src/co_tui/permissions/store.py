"""Rules saved from the approval dialog ("always allow this in this project").

One JSON file per project in the user's config directory, named by a hash of the project's
real path (which the file also records), written atomically with mode 0600:

    ~/.config/co-tui/permissions/<sha256 of the real path>.json
    {"project": "/home/me/src/app", "allow": ["shell(npm test *)"]}

Never in the workspace: a sandboxed command can write there. When the config directory is
inside the project, nothing is saved there and nothing saved there is read.

`load` reads the file again only when it changed (its stat differs): the rules are looked at
on every guarded call, and another session or the user may edit them meanwhile.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from co_tui.config.paths import user_config_dir

STORE_DIR_NAME = "permissions"


class StoreError(Exception):
    """The rules could not be saved; the message says why, in one line."""


@dataclass(frozen=True)
class SavedRules:
    texts: tuple[str, ...] = ()
    problem: str = ""  # why the file (or some of it) could not be read; "" when it could


NONE_SAVED = SavedRules()


class ProjectRuleStore:
    def __init__(self, project: Path) -> None:
        self.project = project.resolve()
        directory = user_config_dir() / STORE_DIR_NAME
        digest = hashlib.sha256(str(self.project).encode()).hexdigest()
        self.path = directory / f"{digest}.json"
        # Why this store cannot be used ("" when it can).
        self.unavailable = ""
        if directory.resolve().is_relative_to(self.project):
            self.unavailable = (
                f"the config directory {directory} is inside this project, where sandboxed "
                "commands can write"
            )
        self._cached: tuple[tuple[int, ...], SavedRules] | None = None  # (file stat, rules)

    def load(self) -> SavedRules:
        """The saved rules; the same object as last time while the file is unchanged."""
        if self.unavailable:
            return SavedRules(problem=self.unavailable)
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return NONE_SAVED
        except OSError as exc:
            return SavedRules(problem=f"{self.path}: cannot read ({exc})")
        key = (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if self._cached is None or self._cached[0] != key:
            self._cached = (key, self._read())
        return self._cached[1]

    def _read(self) -> SavedRules:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return SavedRules()
        except (OSError, UnicodeDecodeError) as exc:
            return SavedRules(problem=f"{self.path}: cannot read ({exc})")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return SavedRules(problem=f"{self.path}: invalid JSON ({exc.msg})")
        if not isinstance(data, dict) or data.get("project") != str(self.project):
            return SavedRules(problem=f"{self.path}: not the rules of {self.project}")
        allow = data.get("allow")
        if not isinstance(allow, list) or not all(isinstance(t, str) for t in allow):
            return SavedRules(problem=f"{self.path}: `allow` is not a list of rules")
        return SavedRules(tuple(allow))

    def add(self, text: str) -> None:
        current = self._current()
        if text not in current:
            self._write([*current, text])

    def remove(self, text: str) -> bool:
        current = self._current()
        if text not in current:
            return False
        self._write([t for t in current if t != text])
        return True

    def _current(self) -> list[str]:
        saved = self.load()
        if saved.problem:
            raise StoreError(saved.problem)
        return list(saved.texts)

    def _write(self, rules: list[str]) -> None:
        payload = json.dumps({"project": str(self.project), "allow": rules}, indent=2) + "\n"
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()  # left behind by a crash
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                os.fchmod(out.fileno(), 0o600)
                out.write(payload)
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise StoreError(f"cannot save to {self.path}: {exc.strerror or exc}") from None
