"""MemoryStore: one Markdown file with YAML frontmatter per memory, editable by hand.

    ---
    id: 7
    created: '2026-01-05T09:30:00+00:00'
    updated: '2026-01-05T09:30:00+00:00'
    tags: [preferences]
    ---
    The user prefers tea to coffee.

A file that cannot be understood (bad YAML, no id, a duplicate id) is skipped and
reported by `load()`; it is never rewritten or deleted by the store.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from co_tui.knowledge import frontmatter
from co_tui.safety.private_files import open_private, private_dir
from co_tui.safety.redaction import shared_redactor

SUFFIX = ".md"
_ID_PREFIX = re.compile(r"^(\d+)-")


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@dataclass
class Memory:
    id: int
    content: str
    created: datetime
    updated: datetime
    tags: list[str] = field(default_factory=list)
    path: Path | None = None

    @property
    def headline(self) -> str:
        first = self.content.strip().splitlines()[0] if self.content.strip() else ""
        return first if len(first) <= 100 else first[:99] + "…"


@dataclass
class LoadResult:
    memories: list[Memory]  # oldest first
    problems: list[str]  # one line per skipped file
    max_seen_id: int = 0


def _as_datetime(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _as_tags(value: object) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        return [t for t in re.split(r"[,\s]+", value) if t]
    if isinstance(value, list) and all(isinstance(t, str | int | float) for t in value):
        return [str(t) for t in value]
    return None


def _slug(content: str) -> str:
    words = re.findall(r"[^\W_]+", content.lower())[:6]
    return "-".join(words)[:48] or "memory"


def parse_memory(path: Path, text: str) -> Memory:
    """Parse one memory file; raises ValueError with a short reason."""
    doc = frontmatter.parse(text)
    if doc.error:
        raise ValueError(doc.error)
    if not doc.has_frontmatter:
        raise ValueError("no frontmatter block (expected id, created, updated, tags)")
    meta = doc.meta
    raw_id = meta.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, int | str) or not str(raw_id).isdigit():
        raise ValueError("frontmatter 'id' must be a whole number")
    created = _as_datetime(meta.get("created"))
    if created is None:
        raise ValueError("frontmatter 'created' must be an ISO date-time")
    updated = _as_datetime(meta.get("updated")) or created
    tags = _as_tags(meta.get("tags"))
    if tags is None:
        raise ValueError("frontmatter 'tags' must be a list of words")
    content = doc.body.strip()
    if not content:
        raise ValueError("the memory text is empty")
    return Memory(int(raw_id), content, created, updated, tags, path)


def render_memory(memory: Memory) -> str:
    meta = {
        "id": memory.id,
        "created": memory.created.isoformat(),
        "updated": memory.updated.isoformat(),
        "tags": list(memory.tags),
    }
    return frontmatter.render(meta, memory.content)


class MemoryStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def files(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.iterdir() if p.suffix == SUFFIX and p.is_file())

    def load(self) -> LoadResult:
        memories: list[Memory] = []
        problems: list[str] = []
        seen: dict[int, Path] = {}
        max_id = 0
        for path in self.files():
            prefix = _ID_PREFIX.match(path.name)
            if prefix:
                max_id = max(max_id, int(prefix.group(1)))
            try:
                memory = parse_memory(path, path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{path.name}: cannot read ({exc.__class__.__name__})")
                continue
            except ValueError as exc:
                problems.append(f"{path.name}: skipped, {exc}")
                continue
            max_id = max(max_id, memory.id)
            if memory.id in seen:
                problems.append(f"{path.name}: skipped, id {memory.id} is also used by "
                                f"{seen[memory.id].name}")  # fmt: skip
                continue
            seen[memory.id] = path
            memories.append(memory)
        memories.sort(key=lambda m: (m.created, m.id))
        return LoadResult(memories, problems, max_id)

    def write(self, memory: Memory) -> Memory:
        """Write (or rewrite) one memory atomically, 0600 in a 0700 folder, with secrets
        (configured ones, credential shapes) redacted; a new memory gets its file name here."""
        private_dir(self.directory)
        memory.content = shared_redactor().text(memory.content)
        if memory.path is None:
            memory.path = self.directory / f"{memory.id:04d}-{_slug(memory.content)}{SUFFIX}"
        tmp = memory.path.with_name(f".{memory.path.name}.tmp")
        with open_private(tmp, "w") as fh:
            fh.write(render_memory(memory))
        os.replace(tmp, memory.path)
        return memory

    def add(
        self, content: str, tags: list[str], now: datetime, created: datetime | None = None
    ) -> Memory:
        next_id = self.load().max_seen_id + 1
        memory = Memory(next_id, content.strip(), created or now, now, list(tags))
        return self.write(memory)

    def delete(self, memory_id: int) -> Memory | None:
        for memory in self.load().memories:
            if memory.id == memory_id and memory.path is not None:
                memory.path.unlink(missing_ok=True)
                return memory
        return None
