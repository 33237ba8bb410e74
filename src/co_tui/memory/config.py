"""MemoryConfig: the memory settings a session uses, copied flat from Settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from co_tui.config.paths import user_data_dir

if TYPE_CHECKING:
    from co_tui.config.settings import Settings


def memories_dir() -> Path:
    return user_data_dir() / "memories"


@dataclass(frozen=True)
class MemoryConfig:
    directory: Path | None = None  # None: user_data_dir()/memories, resolved at use
    max_count: int = 200
    dedup_window_days: int = 7
    dedup_threshold: int = 85  # rapidfuzz similarity, 0-100
    decay_strategy: Literal["summarize", "cut"] = "summarize"
    decay_percentage: float = 0.2
    summarization_model: str = ""  # "" = the session's main model

    @property
    def path(self) -> Path:
        return self.directory or memories_dir()

    @classmethod
    def from_settings(cls, settings: Settings) -> MemoryConfig:
        return cls(
            max_count=settings.memory_max_count,
            dedup_window_days=settings.memory_dedup_window_days,
            dedup_threshold=settings.memory_dedup_threshold,
            decay_strategy=settings.memory_decay_strategy,
            decay_percentage=settings.memory_decay_percentage,
            summarization_model=settings.summarization_model,
        )
