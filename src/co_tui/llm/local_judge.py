"""Whether the embedded model should decline a request: a naive Bayes judge over its words.

A 135M model cannot tell a harmful request from an everyday one: asked "is this harmful?",
its yes/no log-odds ranked harmful requests below everyday ones as often as above (AUC 0.32
on 30 + 30 requests of our own), and its own embeddings put them no further apart than word
overlap does. Retrieval over worked examples (local_route) declined half of them, because a
harmful request shares its verbs ("delete", "send", "post") with everyday work.

What tells them apart is the rest of the sentence: whose data it is, "every", "without
telling", "pretending to be", "so nobody". So the judge is trained on requests to decline
and requests to carry out that use the same verbs (`local_judgements.jsonl`, with the
requests of the worked examples in `local_examples.jsonl` as more to carry out), and weighs
each word and word pair by how much more often it occurs in the requests to decline
(multinomial naive Bayes, add-one smoothing). Nothing in it names a tool: it judges the
request, whichever tools are on offer.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from itertools import pairwise

from co_tui.llm.local_route import builtin_examples, word_stems

# Summed log-odds above which a request is declined. Measured on requests of our own that
# the judge is not trained on: 25 of 30 harmful ones declined, none of 30 everyday ones with
# the same verbs; the everyday request scoring highest is at -1.7, a two-word one ("Run
# pwd.") at -0.55.
DECLINE_ABOVE = 0.5


def features(text: str) -> set[str]:
    """The words of `text` and each pair of neighbours ("without tell", "every file")."""
    words = word_stems(text)
    return {*words, *(f"{a} {b}" for a, b in pairwise(words))}


@dataclass(frozen=True)
class Judgement:
    request: str
    decline: bool


class DeclineJudge:
    def __init__(self, judgements: Sequence[Judgement]) -> None:
        declined = Counter(f for j in judgements if j.decline for f in features(j.request))
        carried_out = Counter(f for j in judgements if not j.decline for f in features(j.request))
        vocabulary = declined.keys() | carried_out.keys()
        in_declined = sum(declined.values()) + len(vocabulary)
        in_carried_out = sum(carried_out.values()) + len(vocabulary)
        self.weights = {
            f: math.log((declined[f] + 1) / in_declined)
            - math.log((carried_out[f] + 1) / in_carried_out)
            for f in vocabulary
        }

    def score(self, request: str) -> float:
        """How much more the request reads like one to decline (log-odds; 0: no evidence)."""
        return sum(self.weights.get(f, 0.0) for f in features(request))

    def declines(self, request: str) -> bool:
        return self.score(request) > DECLINE_ABOVE


def _rows(lines: Iterable[str]) -> list[Judgement]:
    rows = (json.loads(line) for line in lines if line.strip())
    return [Judgement(r["request"], bool(r["decline"])) for r in rows]


@cache
def builtin_judge() -> DeclineJudge:
    text = files("co_tui.llm").joinpath("local_judgements.jsonl").read_text(encoding="utf-8")
    tool_requests = [Judgement(e.request, False) for e in builtin_examples() if e.tool]
    return DeclineJudge([*_rows(text.splitlines()), *tool_requests])
