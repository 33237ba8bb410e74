"""Results files, baselines, and the degradation gate.

`results-<model>.json` is what a run writes; a baseline (`baseline-<model>.json`) is a
results file kept on purpose (`co-tui eval --save-baseline`). Both hold each case's pass
rate, so the gate compares a run with the baseline of the same model on the cases both
contain: a `--cases` subset, or a cases file that gained cases, still compares like with like.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from co_tui.evals.cases import DIMENSIONS
from co_tui.evals.scoring import (
    CaseResult,
    benign_served,
    dimension_scores,
    overall,
    scores_from_pass_rates,
)

SCHEMA_VERSION = 1
DEFAULT_MAX_DEGRADATION = 10.0


class ResultsFileError(Exception):
    """A results or baseline file cannot be read."""


def file_stem(model: str) -> str:
    """A model label made safe for a filename: `local:SmolLM2-135M` -> `local-SmolLM2-135M`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.") or "model"


def results_payload(
    model: str, results: Sequence[CaseResult], run_info: Mapping[str, Any]
) -> dict[str, Any]:
    scores = dimension_scores(results)
    return {
        "schema": SCHEMA_VERSION,
        "model": model,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        **run_info,
        "scores": {
            d: {
                "score": round(s.score, 2),
                "min": round(s.low, 2),
                "max": round(s.high, 2),
                "stdev": round(s.stdev, 2),
                "cases": s.cases,
            }
            for d, s in scores.items()
        },
        "overall": round(overall({d: s.score for d, s in scores.items()}), 2),
        "benign_served": _rounded(benign_served(results)),
        "cases": {
            r.case.id: {
                "dimension": r.case.dimension,
                "pass_rate": round(r.pass_rate, 4),
                "runs": [
                    {
                        "passed": v.passed,
                        "tool": o.tool,
                        "args": o.args,
                        "text": o.text,
                        "error": o.error,
                        "seconds": round(o.seconds, 2),
                    }
                    for o, v in zip(r.outcomes, r.verdicts, strict=True)
                ],
            }
            for r in results
        },
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def write_results(path: Path, payload: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Baseline:
    path: Path
    model: str
    scores: dict[str, float]  # the file's own dimension scores
    pass_rates: dict[str, float]  # case id -> pass rate 0..1
    dimensions: dict[str, str]  # case id -> dimension

    def scores_on(self, case_ids: set[str]) -> dict[str, float]:
        rates = {k: v for k, v in self.pass_rates.items() if k in case_ids}
        return scores_from_pass_rates(rates, self.dimensions)


def read_baseline(path: Path) -> Baseline:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        cases: dict[str, Any] = data["cases"]
        return Baseline(
            path,
            str(data["model"]),
            {d: float(s["score"]) for d, s in data["scores"].items()},
            {k: float(c["pass_rate"]) for k, c in cases.items()},
            {k: str(c["dimension"]) for k, c in cases.items()},
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ResultsFileError(
            f"{path}: not a results file ({type(exc).__name__}: {exc})"
        ) from None


def find_baselines(folder: Path) -> tuple[list[Baseline], list[str]]:
    """Every readable `baseline-*.json` in `folder`, and a message per unreadable one."""
    found: list[Baseline] = []
    problems: list[str] = []
    for path in sorted(folder.glob("baseline-*.json")):
        try:
            found.append(read_baseline(path))
        except ResultsFileError as exc:
            problems.append(str(exc))
    return found, problems


@dataclass(frozen=True)
class GateRow:
    dimension: str
    baseline: float
    current: float
    cases: int

    @property
    def delta(self) -> float:
        return self.current - self.baseline


@dataclass(frozen=True)
class GateResult:
    baseline: Baseline | None
    rows: list[GateRow]
    max_degradation: float

    @property
    def failed_rows(self) -> list[GateRow]:
        # A small epsilon keeps float noise (e.g. 33.33 - 23.33) from deciding the gate.
        return [r for r in self.rows if r.delta < -self.max_degradation - 1e-6]

    @property
    def passed(self) -> bool:
        return not self.failed_rows


def gate(
    model: str,
    results: Sequence[CaseResult],
    baselines: Sequence[Baseline],
    max_degradation: float = DEFAULT_MAX_DEGRADATION,
) -> GateResult:
    """Compare with the baseline of `model` on the cases both hold; no baseline passes."""
    mine = next((b for b in baselines if b.model == model), None)
    if mine is None:
        return GateResult(None, [], max_degradation)
    current = {r.case.id: r.pass_rate for r in results if r.case.id in mine.pass_rates}
    dims = {r.case.id: r.case.dimension for r in results}
    now = scores_from_pass_rates(current, dims)
    before = mine.scores_on(set(current))
    rows = [
        GateRow(d, before[d], now[d], sum(1 for k in current if dims[k] == d))
        for d in DIMENSIONS
        if d in now and d in before
    ]
    return GateResult(mine, rows, max_degradation)
