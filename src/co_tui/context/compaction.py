"""A compaction: from which message on the model is sent a summary instead of the earlier
messages. The transcript itself keeps every message (context/window.py builds requests;
store/sessions.py stores compactions as events of the session)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

CompactionKind = Literal["window", "compact", "overflow"]


@dataclass(frozen=True)
class Compaction:
    """The transcript's first `upto` messages are sent as `replacement`. Tool returns before
    `trim_through` are trimmed even within the current turn (after a context overflow)."""

    upto: int
    replacement: tuple[ModelMessage, ...]
    kind: CompactionKind
    trim_through: int = 0


@dataclass
class ContextWindow:
    """One session's compactions, oldest first; the last one is in force."""

    compactions: list[Compaction] = field(default_factory=list)
    retry_at_turn: int | None = None  # a summary failed in the turn starting here: wait

    @property
    def current(self) -> Compaction | None:
        return self.compactions[-1] if self.compactions else None

    def reset(self, compactions: Sequence[Compaction] = ()) -> None:
        self.compactions = list(compactions)
        self.retry_at_turn = None

    def view(self, messages: Sequence[ModelMessage]) -> list[ModelMessage]:
        compaction = self.current
        if compaction is None or compaction.upto > len(messages):
            return list(messages)
        return [*compaction.replacement, *messages[compaction.upto :]]

    def transcript_index(self, view_index: int) -> int | None:
        """Where the view's message `view_index` is in the transcript (None: a summary)."""
        compaction = self.current
        if compaction is None:
            return view_index
        if view_index < len(compaction.replacement):
            return None
        return compaction.upto + view_index - len(compaction.replacement)

    def view_index(self, transcript_index: int) -> int:
        compaction = self.current
        if compaction is None:
            return transcript_index
        return len(compaction.replacement) + max(0, transcript_index - compaction.upto)

    @property
    def trim_through(self) -> int:
        """Tool returns before this transcript index are trimmed (after an overflow)."""
        compaction = self.current
        return compaction.trim_through if compaction is not None else 0

    def compacted_upto(self) -> int:
        compaction = self.current
        return compaction.upto if compaction is not None else 0
