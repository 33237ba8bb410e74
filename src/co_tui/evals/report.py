"""Rich rendering of an eval: scores per dimension, failed cases, the model matrix, the gate."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from rich.table import Table

from co_tui.evals.baseline import Baseline, GateResult
from co_tui.evals.cases import DIMENSIONS
from co_tui.evals.scoring import CaseResult, DimensionScore, Outcome, overall

ARGS_SHOWN = 80


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def scores_table(
    scores: Mapping[str, DimensionScore], repeat: int, served: float | None = None
) -> Table:
    table = Table(title=f"Tool-calling scores (% of cases passed, {repeat} run(s))")
    table.add_column("dimension")
    table.add_column("cases", justify="right")
    table.add_column("score", justify="right")
    if repeat > 1:
        for name in ("min", "max", "stdev"):
            table.add_column(name, justify="right")
    for dim in DIMENSIONS:
        s = scores.get(dim)
        if s is None:
            continue
        row = [dim, str(s.cases), _pct(s.score)]
        if repeat > 1:
            row += [_pct(s.low), _pct(s.high), f"{s.stdev:.1f}"]
        table.add_row(*row)
    total = overall({d: s.score for d, s in scores.items()})
    table.add_row(
        "overall", str(sum(s.cases for s in scores.values())), _pct(total), end_section=True
    )
    if served is not None:
        benign = sum(s.cases for d, s in scores.items() if d != "refusal")
        table.add_row("benign served", str(benign), _pct(served))
    return table


def _move(outcome: Outcome) -> str:
    if outcome.error:
        return f"error: {outcome.error}"
    if outcome.tool is None:
        return f"text: {outcome.text[:ARGS_SHOWN]!r}"
    args = json.dumps(outcome.args, ensure_ascii=False)
    return f"{outcome.tool} {args[:ARGS_SHOWN]}"


def failures_table(results: Sequence[CaseResult]) -> Table | None:
    failed = [r for r in results if r.pass_rate < 1.0]
    if not failed:
        return None
    table = Table(title="Cases not passed every time")
    table.add_column("case")
    table.add_column("dimension")
    table.add_column("passed", justify="right")
    table.add_column("expected")
    table.add_column("first failing move")
    for r in failed:
        expected = (
            "no tool"
            if r.case.expect_tool is None
            else (f"{r.case.expect_tool} {json.dumps(r.case.expect_args, ensure_ascii=False)}")
        )
        bad = next(o for o, v in zip(r.outcomes, r.verdicts, strict=True) if not v.passed)
        passes = sum(v.passed for v in r.verdicts)
        table.add_row(
            r.case.id,
            r.case.dimension,
            f"{passes}/{len(r.verdicts)}",
            expected[:ARGS_SHOWN],
            _move(bad),
        )
    return table


def matrix_table(baselines: Sequence[Baseline], model: str, current: Mapping[str, float]) -> Table:
    """Model x dimension: every baseline's own scores, and this run's."""
    table = Table(title="Models x dimensions (baselines and this run)")
    table.add_column("model")
    for dim in DIMENSIONS:
        table.add_column(dim, justify="right")
    table.add_column("overall", justify="right")
    for b in baselines:
        table.add_row(
            f"{b.model} (baseline)",
            *[_pct(b.scores.get(d)) for d in DIMENSIONS],
            _pct(overall(b.scores)),
        )
    table.add_row(
        f"{model} (this run)",
        *[_pct(current.get(d)) for d in DIMENSIONS],
        _pct(overall(current)),
        style="bold",
    )
    return table


def gate_table(result: GateResult) -> Table:
    b = result.baseline
    title = f"Gate: vs {b.path.name if b else '?'}, max degradation {result.max_degradation:g}"
    table = Table(title=title + " points (on the cases both hold)")
    table.add_column("dimension")
    table.add_column("cases", justify="right")
    table.add_column("baseline", justify="right")
    table.add_column("now", justify="right")
    table.add_column("delta", justify="right")
    table.add_column("verdict")
    failed = {r.dimension for r in result.failed_rows}
    for row in result.rows:
        verdict = "[red]FAIL[/red]" if row.dimension in failed else "[green]ok[/green]"
        table.add_row(
            row.dimension,
            str(row.cases),
            _pct(row.baseline),
            _pct(row.current),
            f"{row.delta:+.1f}",
            verdict,
        )
    return table
