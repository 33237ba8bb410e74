"""Memory tools: save_memory (asks first), recall_memory, list_memories; forget_memory for /forget.

recall/list are sync so pydantic-ai runs them in worker threads; save_memory is async
(decay may call a model) and does its few small file writes inline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_ai import ModelRetry, RunContext, ToolReturn
from pydantic_ai.models import Model

from co_tui.context.deps import CoDeps
from co_tui.memory.config import memories_dir
from co_tui.memory.lifecycle import save_memory_entry
from co_tui.memory.recall import recall
from co_tui.memory.store import Memory, MemoryStore
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.tools.tool_return import tool_return

MAX_MEMORY_CHARS = 4000
LIST_LIMIT = 100


def _line(memory: Memory) -> str:
    tags = f" [{', '.join(memory.tags)}]" if memory.tags else ""
    return f"#{memory.id} ({memory.updated:%Y-%m-%d}){tags} {memory.headline}"


def _problems_note(problems: list[str]) -> list[str]:
    if not problems:
        return []
    return [f"Skipped {len(problems)} unreadable memory file(s):", *(f"  {p}" for p in problems)]


async def save_memory(
    ctx: RunContext[CoDeps], content: str, tags: list[str] | None = None
) -> ToolReturn:
    """Remember a fact about the user or their work for future sessions.

    Args:
        content: The fact to remember, as one self-contained sentence or short paragraph.
        tags: Optional topic words, e.g. ["preferences", "work"].
    """
    content = content.strip()
    if not content:
        raise ModelRetry("The memory is empty: pass the fact to remember in `content`.")
    if len(content) > MAX_MEMORY_CHARS:
        raise ModelRetry(f"The memory is too long (max {MAX_MEMORY_CHARS} characters).")
    assert isinstance(ctx.model, Model)  # co-tui runs no realtime sessions
    outcome = await save_memory_entry(content, tags, ctx.deps.memory, model=ctx.model)
    verb = "Updated" if outcome.action == "updated" else "Saved"
    lines = [f"{verb} memory #{outcome.memory.id}: {outcome.memory.headline}"]
    if outcome.decayed_ids:
        how = f"summarised into #{outcome.summary.id}" if outcome.summary else "removed"
        lines.append(f"{len(outcome.decayed_ids)} oldest memories {how} (memory limit).")
    lines.extend(outcome.warnings)
    return tool_return(
        ToolDisplay("\n".join(lines)),
        id=outcome.memory.id,
        action=outcome.action,
        decayed=outcome.decayed_ids,
    )


def recall_memory(ctx: RunContext[CoDeps], query: str, limit: int = 5) -> ToolReturn:
    """Look up saved memories about the user relevant to a query.

    Args:
        query: Keywords or a question, e.g. "coffee preferences".
        limit: Maximum memories to return (default 5).
    """
    if not query.strip():
        raise ModelRetry("The query is empty: pass keywords in `query`.")
    loaded = MemoryStore(ctx.deps.memory.path).load()
    found = recall(loaded.memories, query, max(1, min(limit, 20)))
    if found:
        lines = [f"{len(found)} memories for {query!r}:"]
        lines += [
            f"- {_line(m)}" + (f"\n  {m.content}" if "\n" in m.content else "") for m in found
        ]
    else:
        lines = [f"No memories match {query!r}."]
    return tool_return(
        ToolDisplay("\n".join(lines + _problems_note(loaded.problems))),
        count=len(found),
        memories=[{"id": m.id, "content": m.content, "tags": m.tags} for m in found],
    )


def list_memories(ctx: RunContext[CoDeps]) -> ToolReturn:
    """List every saved memory (newest first) with its id, date and tags."""
    loaded = MemoryStore(ctx.deps.memory.path).load()
    newest = sorted(loaded.memories, key=lambda m: (m.updated, m.id), reverse=True)
    shown = newest[:LIST_LIMIT]
    lines = [f"{len(newest)} memories:" if newest else "No memories saved yet."]
    lines += [f"- {_line(m)}" for m in shown]
    if len(newest) > len(shown):
        lines.append(f"… and {len(newest) - len(shown)} older; use recall_memory to search.")
    return tool_return(
        ToolDisplay("\n".join(lines + _problems_note(loaded.problems))),
        count=len(newest),
        has_more=len(newest) > len(shown),
    )


def forget_memory(memory_id: str | int, directory: Path | None = None) -> str:
    """Delete one memory by id (for `/forget <id>`); returns a line to show the user."""
    text = str(memory_id).strip().lstrip("#")
    if not text.isdigit():
        return "usage: /forget <id>  (ids are shown by list_memories, e.g. /forget 7)"
    removed = MemoryStore(directory or memories_dir()).delete(int(text))
    if removed is None:
        return f"No memory #{text}."
    return f"Forgot memory #{removed.id}: {removed.headline}"


# Registered by build_agent (tools/catalog.py); whether a call asks: policy/tool_specs.py.
TOOLS: list[Any] = [save_memory, recall_memory, list_memories]
