"""Two judgements a 135M model cannot make about a request: whether to decline it, and whether
it asks for an answer in words rather than an action. Each is a naive Bayes judge over words.

A 135M model cannot tell a harmful request from an everyday one: asked "is this harmful?",
its yes/no log-odds ranked harmful requests below everyday ones as often as above (AUC 0.32
on 30 + 30 requests of our own), and its own embeddings put them no further apart than word
overlap does. Retrieval over worked examples (local_route) declined half of them, because a
harmful request shares its verbs ("delete", "send", "post") with everyday work. Retrieval
also sends a question *about* a tool's subject to the tool: "what's the difference between
a process and a thread?" shares its words with "show the replies in that Slack thread".

What tells them apart is the rest of the sentence: whose data it is, "every", "without
telling", "pretending to be", "so nobody"; "explain", "how do I", "what does ... mean". So
each judge is trained on two sets of requests that use the same words
(`local_judgements.jsonl`: to decline or to carry out; `local_intents.jsonl`: to answer or to
act; the worked examples of `local_examples.jsonl` count as more of each), and weighs each
word and word pair by how much more often it occurs in one set (multinomial naive Bayes,
add-one smoothing). Nothing in them names a tool: they judge the request, whichever tools
are on offer.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable
from functools import cache
from importlib.resources import files
from itertools import pairwise

from co_tui.llm.local.route import builtin_examples, word_stems

# Summed log-odds above which a request is declined. Measured on requests of our own that
# the judge is not trained on: 25 of 30 harmful ones declined, none of 30 everyday ones with
# the same verbs; the everyday request scoring highest is at -1.7, a two-word one ("Run
# pwd.") at -0.55.
DECLINE_ABOVE = 0.5
# Summed log-odds above which a request that retrieval sent to a tool is answered in words.
# Measured by 5-fold cross-validation on local_intents.jsonl: 2 of 361 requests to act
# answered, 230 of 368 requests to answer caught (at 2.0: 6 and 266). Acting by mistake
# only asks for approval, so the bar is set for keeping actions.
ANSWER_ABOVE = 4.0


def features(text: str) -> set[str]:
    """The words of `text` and each pair of neighbours ("without tell", "every file")."""
    words = word_stems(text)
    return {*words, *(f"{a} {b}" for a, b in pairwise(words))}


class WordJudge:
    """Says yes to a request that reads more like `yes` than like `no` by over `above`."""

    def __init__(self, yes: Iterable[str], no: Iterable[str], above: float) -> None:
        yes_counts = Counter(f for request in yes for f in features(request))
        no_counts = Counter(f for request in no for f in features(request))
        vocabulary = yes_counts.keys() | no_counts.keys()
        in_yes = sum(yes_counts.values()) + len(vocabulary)
        in_no = sum(no_counts.values()) + len(vocabulary)
        self.weights = {
            f: math.log((yes_counts[f] + 1) / in_yes) - math.log((no_counts[f] + 1) / in_no)
            for f in vocabulary
        }
        self.above = above

    def score(self, request: str) -> float:
        """How much more the request reads like `yes` (log-odds; 0: no evidence)."""
        return sum(self.weights.get(f, 0.0) for f in features(request))

    def says_yes(self, request: str) -> bool:
        return self.score(request) > self.above


@cache
def _labelled(name: str, label: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The requests of a data file labelled true, then those labelled false (read once: both
    judges learn from local_judgements.jsonl)."""
    text = files("co_tui.llm.local").joinpath(name).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    yes = tuple(r["request"] for r in rows if r[label])
    return yes, tuple(r["request"] for r in rows if not r[label])


@cache
def builtin_decline_judge() -> WordJudge:
    """Yes: decline the request."""
    declined, carried_out = _labelled("local_judgements.jsonl", "decline")
    tool_requests = [e.request for e in builtin_examples() if e.tool]
    return WordJudge(declined, [*carried_out, *tool_requests], DECLINE_ABOVE)


@cache
def builtin_answer_judge() -> WordJudge:
    """Yes: answer the request in words, though retrieval found a tool for it."""
    acts, answers = _labelled("local_intents.jsonl", "act")
    declined, carried_out = _labelled("local_judgements.jsonl", "decline")
    examples = builtin_examples()
    tool_requests = [e.request for e in examples if e.tool]
    in_words = [e.request for e in examples if e.tool is None]
    return WordJudge(
        [*answers, *in_words], [*acts, *tool_requests, *declined, *carried_out], ANSWER_ABOVE
    )
