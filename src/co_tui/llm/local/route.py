"""Which tool a request is for, when the model is too small to choose: lexical retrieval.

Measured on `co-tui eval` with SmolLM2-135M-Instruct: asked to pick one of the four most
relevant tools or "answer" under a grammar, it picked right 35% of the time, about what a
die would do; asked "should a tool be used? yes/no" it said yes to 96 requests of 103. Okapi
BM25 over each tool's own name and description and a few worked examples per built-in tool
(`local_examples.jsonl`) picks right far more often, so the route is retrieved and the model
does what it can do: fill in arguments it can copy from the conversation, and write answers.

"answer" is a route like any tool, described only by examples (small talk, questions it can
answer itself, writing, and requests co-tui declines). A tool without examples (an MCP tool,
a new built-in) is found by its name and description alone: no code names any tool.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic_ai.tools import ToolDefinition

# Below this a tool is not worth proposing: the request is answered in words. Measured on
# the committed eval cases (a score is roughly the summed rarity of the words that match).
MIN_SCORE = 3.0
# A route's score sums its best documents (its card and examples): one lucky word in one
# example does not outweigh a tool whose description and examples both match.
DOCS_PER_ROUTE = 2
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
_WORD = re.compile(r"[a-z][a-z0-9']*")


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


# Values have shapes that say something about the tool even where their words do not.
SHAPES = (
    ("<url>", re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)),
    ("<email>", re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+", re.IGNORECASE)),
    ("<file>", re.compile(r"(?<![\w/])[\w./-]*\w\.[a-z][a-z0-9]{0,4}\b", re.IGNORECASE)),
)


# A quoted part of a request: the quotes stand apart from words, so "can't" opens nothing.
QUOTED = re.compile(r"""(?<!\w)(?:"(.+?)"|'(.+?)'(?!\w)|`(.+?)`|“(.+?)”|‘(.+?)’)""")


def word_stems(text: str, *, besides: frozenset[str] = frozenset()) -> list[str]:
    """The words of `text` but those in `besides`, lowercased and lightly stemmed."""
    found = _WORD.findall(text.lower().replace("_", " "))
    return [_stem(w.removesuffix("'s")) for w in found if w not in besides]


def _words(text: str) -> list[str]:
    return word_stems(text, besides=_STOPWORDS)


def terms(text: str) -> list[str]:
    """What can tell routes apart in `text`: its words without function words or bare
    numbers (a number is an argument, not an intent), names split at "_", and a mark for
    each URL, email address or file name in it."""
    marks = []
    for mark, pattern in SHAPES:
        marks += [mark] * len(pattern.findall(text))
        text = pattern.sub(" ", text)
    return _words(text) + marks


def _form_terms(text: str) -> list[str]:
    """`terms`, and a mark for each quoted part: an example written the same way shows best
    where its values come from ("send 'lunch?' to #food" for "post 'done' to #eng")."""
    return terms(text) + ["<quoted>"] * len(QUOTED.findall(text))


@dataclass(frozen=True)
class Example:
    """A worked example: a request and the call it needs (`tool` None: answer in words)."""

    request: str
    tool: str | None
    args: dict[str, Any] = field(default_factory=dict)


def intent_terms(example: Example) -> list[str]:
    """The words of an example's request that ask for its tool, not its arguments' values:
    "what's my wife's name?" asks recall_memory for a name, not about names."""
    values = {t for v in example.args.values() if isinstance(v, str) for t in _words(v)}
    return [t for t in terms(example.request) if t not in values]


@cache
def builtin_examples() -> tuple[Example, ...]:
    text = files("co_tui.llm.local").joinpath("local_examples.jsonl").read_text(encoding="utf-8")
    rows = (json.loads(line) for line in text.splitlines() if line.strip())
    return tuple(Example(r["request"], r.get("tool"), r.get("args") or {}) for r in rows)


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


def card(tool: ToolDefinition) -> str:
    """A tool's name and the first paragraph of its description: what routing reads."""
    summary = (tool.description or "").strip().split("\n\n", 1)[0]
    return f"{tool.name.replace('_', ' ')} {' '.join(summary.split())}"


@dataclass(frozen=True)
class Route:
    tool: str | None  # None: answer in words
    score: float  # the score of the best tool (also when the route is "answer")


class Router:
    """Routes requests among `tools` and "answer"; built once per set of tools."""

    def __init__(
        self, tools: Sequence[ToolDefinition], examples: Sequence[Example] | None = None
    ) -> None:
        names = {t.name for t in tools}
        self.tools = list(tools)
        known = builtin_examples() if examples is None else examples
        self.examples = [e for e in known if e.tool is None or e.tool in names]
        owners: list[str | None] = [t.name for t in tools]
        docs = [terms(card(t)) for t in tools]
        for example in self.examples:
            owners.append(example.tool)
            docs.append(intent_terms(example))
        self._owners = owners
        self._index = _BM25(docs)

    def scores(self, query: str) -> dict[str | None, float]:
        """Each route's score for `query` (None: the answer route)."""
        best: dict[str | None, list[float]] = {}
        for owner, score in zip(self._owners, self._index.scores(terms(query)), strict=True):
            best.setdefault(owner, []).append(score)
        return {o: sum(sorted(s, reverse=True)[:DOCS_PER_ROUTE]) for o, s in best.items()}

    def route(self, query: str, *, allow_answer: bool = True) -> Route:
        scores = self.scores(query)
        tools = {o: s for o, s in scores.items() if o is not None}
        if not tools:
            return Route(None, 0.0)
        tool = max(tools, key=lambda name: tools[name])
        top = tools[tool]
        if not allow_answer:
            return Route(tool, top)
        if top < MIN_SCORE or scores.get(None, 0.0) >= top:
            return Route(None, top)
        return Route(tool, top)

    def examples_of(self, tool: str) -> list[Example]:
        return [e for e in self.examples if e.tool == tool]

    def examples_for(self, tool: str, query: str, limit: int) -> list[Example]:
        """The worked examples of `tool` most like `query`, the closest last."""
        mine = self.examples_of(tool)
        if not mine:
            return []
        index = _BM25([_form_terms(e.request) for e in mine])
        ranked = sorted(zip(index.scores(_form_terms(query)), range(len(mine)), strict=True))
        return [mine[i] for _, i in ranked[-limit:]]
