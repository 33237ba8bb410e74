"""Which tools could serve a request: lexical retrieval over what the tools say of themselves.

Okapi BM25 over each tool's card: its name, the first paragraph of its description, and its
parameters' names, descriptions and allowed values. Nothing else is indexed (no worked
examples, no per-intent data), so a tool co-tui has never seen (an MCP tool, a skill, a new
built-in) is found the same way as a built-in one. The shortlist is what the model chooses
from (local_strategy); its first candidate alone is what `local_tool_choice = "retrieval"`
calls, and what the eval reports beside the model's own pick.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai.tools import ToolDefinition

SHORTLIST_SIZE = 4
# Below this a tool is not worth proposing: retrieval alone answers in words. A score is
# roughly the summed rarity of the request's words that the card shares.
MIN_SCORE = 2.0
_BM25_K1, _BM25_B = 1.2, 0.75

# English function words (and contractions): they say nothing about which tool is meant.
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    please i'm it's what's don't let's much many also one two three anything something
    everything"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[^\W\d_][\w']*")

# Values have shapes that say something about the tool even where their words do not.
_SHAPES = (
    ("<url>", re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)),
    ("<email>", re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+", re.IGNORECASE)),
    ("<file>", re.compile(r"(?<![\w/])[\w./-]*\w\.[a-z][a-z0-9]{0,4}\b", re.IGNORECASE)),
)
_SHAPE_WORDS = {"<url>": ("url", "link"), "<email>": ("email", "address"), "<file>": ("file",)}


def _stem(word: str) -> str:
    """A light suffix strip, so "emails" meets "email" and "searches" meets "search"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    return word


def terms(text: str) -> list[str]:
    """What can tell tools apart in `text`: its words without function words, lightly
    stemmed, names split at "_", and a mark for each URL, email address or file name."""
    marks = []
    for mark, pattern in _SHAPES:
        marks += [mark] * len(pattern.findall(text))
        text = pattern.sub(" ", text)
    words = _WORD.findall(text.lower().replace("_", " "))
    return [_stem(w.removesuffix("'s")) for w in words if w not in _STOPWORDS] + marks


def _schema_text(schema: dict[str, Any]) -> str:
    """The parameters' names, descriptions and allowed values."""
    parts: list[str] = []
    for name, prop in (schema.get("properties") or {}).items():
        parts.append(name)
        if isinstance(prop, dict):
            parts.append(str(prop.get("description") or ""))
            parts += [str(v) for v in prop.get("enum") or ()]
    return " ".join(parts)


def card(tool: ToolDefinition) -> list[str]:
    """A tool's terms: its name, description summary and parameters. A parameter that takes
    a URL, an address or a file also answers to that shape's mark."""
    summary = (tool.description or "").strip().split("\n\n", 1)[0]
    found = terms(f"{tool.name} {summary} {_schema_text(tool.parameters_json_schema or {})}")
    for mark, words in _SHAPE_WORDS.items():
        if any(w in found for w in words):
            found.append(mark)
    return found


class _BM25:
    def __init__(self, docs: Sequence[Sequence[str]]) -> None:
        self.docs = [Counter(d) for d in docs]
        self.lengths = [len(d) for d in docs]
        self.average = (sum(self.lengths) / len(docs)) if docs else 0.0
        seen = Counter(t for d in self.docs for t in d)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in seen.items()}

    def scores(self, query: Sequence[str]) -> list[float]:
        out = []
        for doc, length in zip(self.docs, self.lengths, strict=True):
            norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * length / (self.average or 1.0))
            score = 0.0
            for term in query:
                tf = doc.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (_BM25_K1 + 1) / (tf + norm)
            out.append(score)
        return out


@dataclass(frozen=True)
class Candidate:
    tool: ToolDefinition
    score: float


class Shortlister:
    """Ranks `tools` for a request; built once per set of tools."""

    def __init__(self, tools: Sequence[ToolDefinition]) -> None:
        self.tools = list(tools)
        self._index = _BM25([card(t) for t in self.tools])

    def ranked(self, request: str) -> list[Candidate]:
        """Every tool whose card shares a word with `request`, the best first."""
        scores = self._index.scores(terms(request))
        found = [Candidate(t, s) for t, s in zip(self.tools, scores, strict=True) if s > 0]
        return sorted(found, key=lambda c: -c.score)

    def shortlist(self, request: str, size: int = SHORTLIST_SIZE) -> list[Candidate]:
        return self.ranked(request)[:size]

    def first(self, request: str) -> ToolDefinition | None:
        """Retrieval alone: the best tool when it scores at least MIN_SCORE, else None."""
        best = self.ranked(request)[:1]
        return best[0].tool if best and best[0].score >= MIN_SCORE else None
