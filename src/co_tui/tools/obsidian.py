"""Obsidian vault tools: search_notes, list_notes, read_note (read-only).

Sync on purpose: pydantic-ai runs sync tools in worker threads, so the index's SQLite
and file I/O never block the event loop. The index lives in `deps.notes_indexes`, one per vault.
Notes are read through co_tui.safety.safe_read: from inside the vault only, never through a
symbolic link (a linked note or folder is refused with the reason, and never indexed).
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from pydantic_ai import ModelRetry, RunContext, ToolReturn

from co_tui.context.deps import CoDeps
from co_tui.knowledge.notes_index import NotesIndex, keyword_pattern, split_keywords
from co_tui.knowledge.vault_paths import UnsafePathError, clean_name
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.safety.safe_read import NOT_REGULAR, NotFound, ReadRefused, read_text_within
from co_tui.tools.tool_return import tool_return

MAX_LIMIT = 50
LIST_LIMIT = 200
MAX_NOTE_CHARS = 100_000
MAX_NOTE_BYTES = 4 * (MAX_NOTE_CHARS + 1)  # enough UTF-8 for MAX_NOTE_CHARS + 1 characters
_SNIPPET_BEFORE = 50
_SNIPPET_AFTER = 90


def _vault(ctx: RunContext[CoDeps]) -> Path:
    vault = ctx.deps.obsidian_vault_path
    if vault is None:
        raise ModelRetry(
            "The Obsidian vault is not configured (set OBSIDIAN_VAULT_PATH or "
            "'obsidian_vault_path' in settings.json). Tell the user; do not retry."
        )
    if not vault.is_dir():
        raise ModelRetry(f"The Obsidian vault {vault} does not exist or is not a directory.")
    return vault


def notes_index(deps: CoDeps, vault: Path) -> NotesIndex:
    """The session's index for `vault`, created on first use."""
    key = vault.resolve()
    index = deps.notes_indexes.get(key)
    if index is None:
        index = deps.notes_indexes.setdefault(key, NotesIndex(vault))
    return index


def _snippets(body: str, keywords: list[str], max_snippets: int = 2) -> list[str]:
    spans: list[tuple[int, int]] = []
    for keyword in keywords:
        hit = keyword_pattern(keyword).search(body)
        if hit:
            spans.append(
                (max(0, hit.start() - _SNIPPET_BEFORE), min(len(body), hit.end() + _SNIPPET_AFTER))
            )
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    out = []
    for start, end in merged[:max_snippets]:
        text = re.sub(r"\s+", " ", body[start:end]).strip()
        prefix = "…" if start > 0 else ""
        suffix = "…" if end < len(body) else ""
        out.append(f"{prefix}{text}{suffix}")
    return out


def search_notes(ctx: RunContext[CoDeps], query: str, limit: int = 10, page: int = 1) -> ToolReturn:
    """Search the Obsidian vault: notes containing ALL the keywords (whole words, any case).

    Args:
        query: Space-separated keywords; every one must appear in the note.
        limit: Results per page (1-50, default 10).
        page: Page number starting at 1; use page+1 when has_more is true.
    """
    vault = _vault(ctx)
    keywords = split_keywords(query)
    if not keywords:
        raise ModelRetry("The query is empty: pass one or more keywords in `query`.")
    limit = max(1, min(limit, MAX_LIMIT))
    page = max(1, page)
    index = notes_index(ctx.deps, vault)
    index.refresh()
    start = (page - 1) * limit
    found = index.search(keywords, start, limit)
    shown, total = found.matches, found.total
    has_more = total > start + limit
    results = [{"path": m.path, "snippets": _snippets(m.body, keywords)} for m in shown]
    if not total:
        display = f"No notes contain all of: {', '.join(keywords)}."
    elif not shown:
        display = f"No more results: {total} notes matched, page {page} is past the end."
    else:
        lines = [
            f'{total} notes match "{" ".join(keywords)}" '
            f"(showing {start + 1}-{start + len(shown)}, page {page}):"
        ]
        for result in results:
            lines.append(f"- {result['path']}")
            lines.extend(f"    {s}" for s in result["snippets"])
        if has_more:
            lines.append(f"More results: call search_notes with page={page + 1}.")
        display = "\n".join(lines)
    return tool_return(
        ToolDisplay(display), count=total, page=page, has_more=has_more, results=results
    )


def list_notes(ctx: RunContext[CoDeps], tag: str | None = None) -> ToolReturn:
    """List the notes in the Obsidian vault, optionally only those with a tag.

    Args:
        tag: A tag such as `project` or `#project` (frontmatter or inline); nested tags
            like `project/alpha` match too. Omit to list every note.
    """
    vault = _vault(ctx)
    index = notes_index(ctx.deps, vault)
    index.refresh()
    notes = index.notes(tag or None)
    shown = notes[:LIST_LIMIT]
    what = f"with tag #{tag.lstrip('#')}" if tag else "in the vault"
    if not notes:
        display = f"No notes {what}."
    else:
        lines = [f"{len(notes)} notes {what}:"]
        for path, tags in shown:
            suffix = f"  ({' '.join('#' + t for t in tags)})" if tags else ""
            lines.append(f"- {path}{suffix}")
        if len(notes) > len(shown):
            lines.append(f"… and {len(notes) - len(shown)} more; narrow with a tag or search.")
        display = "\n".join(lines)
    return tool_return(
        ToolDisplay(display),
        count=len(notes),
        has_more=len(notes) > len(shown),
        notes=[path for path, _ in shown],
    )


def _close_matches(index: NotesIndex, name: str) -> str:
    paths = index.paths()
    stems = {p.rsplit("/", 1)[-1]: p for p in paths}
    close = difflib.get_close_matches(name, paths, n=5, cutoff=0.5)
    close += [stems[s] for s in difflib.get_close_matches(name.rsplit("/", 1)[-1], stems, n=5)]
    close = list(dict.fromkeys(close))[:5]
    if close:
        return "Close matches: " + ", ".join(close) + "."
    return "Use list_notes or search_notes to find the right name."


def _candidates(name: str) -> list[str]:
    return [name] if name.endswith(".md") else [name, f"{name}.md"]


def read_note(ctx: RunContext[CoDeps], filename: str) -> str:
    """Read one note from the Obsidian vault and return its Markdown.

    Args:
        filename: The note's path relative to the vault, e.g. `projects/alpha.md`
            (the `.md` may be left out).
    """
    vault = _vault(ctx)
    try:
        name = clean_name(filename)
    except UnsafePathError as exc:
        raise ModelRetry(f"Cannot read {filename!r}: {exc}.") from None
    text: str | None = None
    candidates = _candidates(name)
    for i, candidate in enumerate(candidates, 1):
        try:  # opened below the vault without following any link, so never outside it
            text = read_text_within(
                vault, candidate, limit=MAX_NOTE_BYTES, truncate=True, errors="replace"
            )
            break
        except NotFound:
            continue
        except ReadRefused as exc:
            if exc.reason == NOT_REGULAR and i < len(candidates):
                continue  # a folder of that name: try the note with `.md`
            raise ModelRetry(f"Cannot read {filename!r}: {exc.relative} {exc.reason}.") from None
    if text is None:
        index = notes_index(ctx.deps, vault)
        index.refresh()
        raise ModelRetry(f"Note {filename!r} not found. {_close_matches(index, filename)}")
    if len(text) > MAX_NOTE_CHARS:
        text = text[:MAX_NOTE_CHARS] + f"\n\n[note truncated at {MAX_NOTE_CHARS} characters]"
    return text


# Registered by build_agent (tools/catalog.py); whether a call asks: policy/tool_specs.py.
TOOLS: list[Any] = [search_notes, list_notes, read_note]
