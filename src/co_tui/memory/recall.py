"""Recall: rank memories for a query by whole-word keyword hits, then fuzzy similarity."""

from __future__ import annotations

import re

from rapidfuzz import fuzz, utils

from co_tui.memory.store import Memory

FUZZY_FLOOR = 75
_STOPWORDS = frozenset(
    re.split(
        r"\s+",
        "a an and are as at be by do does for from has have i in is it me my of on or the "
        "to was what when where which who why with you your user about",
    )
)


def _keywords(query: str) -> list[str]:
    words = re.findall(r"[^\W_]+", query.lower())
    return [w for w in words if w not in _STOPWORDS] or words


def score(memory: Memory, query: str) -> float:
    text = f"{memory.content} {' '.join(memory.tags)}"
    words = _keywords(query)
    hits = sum(1 for w in words if re.search(rf"(?<!\w){re.escape(w)}", text, re.IGNORECASE))
    keyword_score = 100 * hits / len(words) if words else 0.0
    fuzzy = fuzz.partial_ratio(query, memory.content, processor=utils.default_process)
    if hits == 0 and fuzzy < FUZZY_FLOOR:
        return 0.0
    return 0.7 * keyword_score + 0.3 * fuzzy


def recall(memories: list[Memory], query: str, limit: int = 5) -> list[Memory]:
    """Best matches first; ties go to the most recently updated."""
    scored = [(score(m, query), m) for m in memories]
    ranked = sorted(
        ((s, m) for s, m in scored if s > 0), key=lambda sm: (sm[0], sm[1].updated), reverse=True
    )
    return [m for _, m in ranked[:limit]]
