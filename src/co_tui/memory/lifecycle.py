"""Saving a memory: near-duplicate update, then decay when the store is over its limit.

Decay takes the oldest `decay_percentage` of memories and either folds them into one
summary memory (a tool-less agent on the summarisation model) or deletes them (`cut`).
If summarising fails, nothing is deleted and the outcome carries a warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from pydantic_ai.models import Model
from rapidfuzz import fuzz, utils

from co_tui.memory.config import MemoryConfig
from co_tui.memory.store import Memory, MemoryStore, utc_now

SUMMARY_TAG = "summary"
SUMMARY_INSTRUCTIONS = (
    "You condense a person's saved assistant memories. Merge the memories you are given "
    "into one short list of facts, keeping every distinct fact, preference, name and date; "
    "drop exact repeats. Reply with the merged memory text only, no preamble."
)


@dataclass
class SaveOutcome:
    memory: Memory
    action: Literal["added", "updated"]
    decayed_ids: list[int] = field(default_factory=list)
    summary: Memory | None = None
    warnings: list[str] = field(default_factory=list)


def similarity(a: str, b: str) -> float:
    return fuzz.token_sort_ratio(a, b, processor=utils.default_process)


def find_duplicate(
    memories: list[Memory], content: str, config: MemoryConfig, now: datetime
) -> Memory | None:
    """The most similar memory updated within the window, if similar enough."""
    since = now - timedelta(days=config.dedup_window_days)
    best: tuple[float, Memory] | None = None
    for memory in memories:
        if memory.updated < since:
            continue
        score = similarity(content, memory.content)
        if score >= config.dedup_threshold and (best is None or score > best[0]):
            best = (score, memory)
    return best[1] if best else None


def _merge_tags(*groups: list[str]) -> list[str]:
    return list(dict.fromkeys(t for group in groups for t in group))


async def summarize_memories(memories: list[Memory], model: Model | str) -> str:
    from pydantic_ai import Agent

    agent: Agent[None, str] = Agent(model, instructions=SUMMARY_INSTRUCTIONS, name="memory-decay")
    listing = "\n".join(f"- ({m.created:%Y-%m-%d}) {m.content}" for m in memories)
    result = await agent.run(f"Memories to merge:\n{listing}")
    return result.output.strip()


async def _decay(
    store: MemoryStore,
    keep_id: int,
    config: MemoryConfig,
    model: Model | str | None,
    now: datetime,
    outcome: SaveOutcome,
) -> None:
    loaded = store.load()
    memories = [m for m in loaded.memories if m.id != keep_id]
    total = len(loaded.memories)
    if total <= config.max_count or not memories:
        return
    count = max(1, math.ceil(total * config.decay_percentage))
    if config.decay_strategy == "summarize":
        count = max(2, count)
    oldest = memories[:count]
    if config.decay_strategy == "summarize":
        if model is None:
            outcome.warnings.append("memory decay skipped: no model to summarise with")
            return
        try:
            text = await summarize_memories(oldest, model)
        except Exception as exc:  # a failing model must not lose memories
            outcome.warnings.append(f"memory decay skipped: summarising failed ({exc})")
            return
        if not text:
            outcome.warnings.append("memory decay skipped: the summary was empty")
            return
        tags = _merge_tags([SUMMARY_TAG], *(m.tags for m in oldest))
        outcome.summary = store.add(text, tags, now, max(m.created for m in oldest))
    for memory in oldest:
        if memory.path is not None:
            memory.path.unlink(missing_ok=True)
        outcome.decayed_ids.append(memory.id)


async def save_memory_entry(
    content: str,
    tags: list[str] | None,
    config: MemoryConfig,
    *,
    model: Model | str | None = None,
    now: datetime | None = None,
) -> SaveOutcome:
    """Save `content`: update a near-duplicate or add; then decay if over the limit.

    `model` summarises on decay when `config.summarization_model` is empty (tests pass a
    FunctionModel; the tool passes the session's model).
    """
    now = now or utc_now()
    tags = [t.strip().lstrip("#") for t in (tags or []) if t.strip().lstrip("#")]
    store = MemoryStore(config.path)
    loaded = store.load()
    duplicate = find_duplicate(loaded.memories, content, config, now)
    if duplicate is not None:
        duplicate.content = content.strip()
        duplicate.tags = _merge_tags(duplicate.tags, tags)
        duplicate.updated = now
        memory = store.write(duplicate)
        return SaveOutcome(memory, "updated")
    memory = store.add(content, tags, now)
    outcome = SaveOutcome(memory, "added")
    summarizer: Model | str | None = config.summarization_model or model
    await _decay(store, memory.id, config, summarizer, now, outcome)
    return outcome
