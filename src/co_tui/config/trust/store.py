"""The user's trust decisions: user_config_dir()/trusted-projects.json, mode 0600.

One record per project, keyed by its real path, holding the decision and the SHA-256 of the
project settings file it was made for: a changed file is a new question. Declines are kept
as well, so the user is not asked at every start. Never written inside a workspace.

A store that cannot be read (malformed, not JSON) counts as empty: every project is asked
about again, which is the safe side. A store inside the project itself (a project holding the
user's config directory) is neither read nor written for it: the sandbox can write there.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from co_tui.config.paths import user_config_dir

STORE_FILE = "trusted-projects.json"
STORE_VERSION = 1

Decision = Literal["trusted", "declined"]


@dataclass(frozen=True)
class TrustRecord:
    decision: Decision
    sha256: str  # of the project settings file the decision was made for
    decided_at: float  # seconds since the epoch


def trust_store_path() -> Path:
    return user_config_dir() / STORE_FILE


def _record(raw: object) -> TrustRecord | None:
    if not isinstance(raw, dict):
        return None
    decision, digest, when = raw.get("decision"), raw.get("sha256"), raw.get("decided_at")
    if decision not in ("trusted", "declined") or not isinstance(digest, str):
        return None
    return TrustRecord(decision, digest, float(when) if isinstance(when, int | float) else 0.0)


class TrustStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or trust_store_path()

    def _read(self) -> dict[str, TrustRecord]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return {}
        records = {root: _record(raw) for root, raw in projects.items()}
        return {root: record for root, record in records.items() if record is not None}

    def inside(self, root: Path) -> bool:
        """True when the store lies in the project `root` (so the project could write it)."""
        return self.path.parent.resolve().is_relative_to(root.resolve())

    def decision(self, root: Path, sha256: str) -> Decision | None:
        """The decision made for this project with this exact settings file, if any."""
        if self.inside(root):
            return None
        record = self._read().get(str(root))
        return record.decision if record is not None and record.sha256 == sha256 else None

    def record(self, root: Path, sha256: str, decision: Decision) -> None:
        """Keep the decision (replacing the project's earlier one). Raises OSError."""
        if self.inside(root):
            raise OSError(f"{self.path} is inside the project, which the sandbox can write")
        records = self._read()
        records[str(root)] = TrustRecord(decision, sha256, time.time())
        payload = {
            "version": STORE_VERSION,
            "projects": {key: asdict(value) for key, value in sorted(records.items())},
        }
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # mkstemp creates the file 0600; it replaces the store in one step.
        fd, tmp = tempfile.mkstemp(prefix=".trusted-projects-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(payload, out, indent=2)
                out.write("\n")
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
