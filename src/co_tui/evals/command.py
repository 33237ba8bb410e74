"""`co-tui eval`: load the cases, run them on the configured model, report, gate."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from co_tui.config.settings import Settings, WebPolicy
from co_tui.evals.baseline import (
    DEFAULT_MAX_DEGRADATION,
    file_stem,
    find_baselines,
    gate,
    results_payload,
    write_results,
)
from co_tui.evals.cases import CasesError, EvalCase, load_cases, select_cases
from co_tui.evals.report import failures_table, gate_table, matrix_table, scores_table
from co_tui.evals.runner import DEFAULT_TIMEOUT_S, parameters, run_cases, tool_definitions
from co_tui.evals.scoring import CaseResult, Outcome, benign_served, dimension_scores
from co_tui.session.chat import ChatSession

EXIT_OK = 0
EXIT_FAILED = 1  # the gate failed, or the model could not be used
EXIT_USAGE = 2  # bad options or a malformed cases file
DEFAULT_CASES_FILE = Path("evals") / "tool_calling.jsonl"
# Greedy decoding and a fixed seed: the same model gives the same answers run after run,
# so the gate measures the model and the prompt, not sampling noise.
DEFAULT_TEMPERATURE = 0.0
DEFAULT_SEED = 0
# Greedy output under a token cap is a prefix of the uncapped output, so the first move is the
# same as long as the cap exceeds the longest call; it keeps a rambling small model fast.
LOCAL_MAX_TOKENS = 256


@dataclass(frozen=True)
class EvalOptions:
    cases_file: Path = DEFAULT_CASES_FILE
    patterns: str | None = None
    repeat: int = 1
    max_degradation: float = DEFAULT_MAX_DEGRADATION
    timeout: float = DEFAULT_TIMEOUT_S
    temperature: float | None = DEFAULT_TEMPERATURE  # None: the provider's own setting
    seed: int | None = DEFAULT_SEED
    results_dir: Path | None = None  # default: the cases file's folder
    save_baseline: bool = False
    max_tokens: int | None = None  # default: LOCAL_MAX_TOKENS for the local model, else none


def _model_label(bundle: Any, model: Model | str | None) -> str:
    if bundle.resolved is not None:
        return str(bundle.resolved.label)
    if isinstance(model, Model):
        name = model.model_name.rstrip(":")  # FunctionModel names look like "function:f:"
        return name if name.startswith(f"{model.system}:") else f"{model.system}:{name}"
    return str(model)


async def run_eval(
    settings: Settings,
    options: EvalOptions,
    *,
    model: Model | str | None = None,
    out: Console | None = None,
    err: Console | None = None,
) -> int:
    """The whole command; returns the exit code. `model` overrides resolution (tests)."""
    out = out or Console(soft_wrap=True)
    err = err or Console(stderr=True, soft_wrap=True)
    if options.repeat < 1:
        err.print("co-tui: --repeat must be at least 1")
        return EXIT_USAGE
    with tempfile.TemporaryDirectory(prefix="co-tui-eval-") as tmp:
        # An empty workspace: no project AGENTS.md or knowledge changes the prompt under test.
        session = _eval_session(settings, Path(tmp), model)
        try:
            return await _run_session(session, options, model, out, err)
        finally:
            await session.aclose()


def _eval_session(settings: Settings, workspace: Path, model: Model | str | None) -> ChatSession:
    """A session that stores nothing (no session record, no spans) and defers every tool.
    Every built-in tool is offered whatever the user's web policy and integrations: the cases
    cover them all."""
    from co_tui.context.deps import create_deps
    from co_tui.sandbox import SandboxChoice, SubprocessSandbox

    settings = settings.model_copy(update={"web_policy": WebPolicy(), "telemetry_enabled": False})
    choice = SandboxChoice(SubprocessSandbox(workspace), "eval: every tool is deferred")
    return ChatSession(
        settings,
        workspace=workspace,
        record=False,
        deps=create_deps(settings, workspace, sandbox_choice=choice),
        agent_options={"model": model, "all_approval": True, "every_tool": True},
    )


async def _run_session(
    session: ChatSession,
    options: EvalOptions,
    model: Model | str | None,
    out: Console,
    err: Console,
) -> int:
    from co_tui.llm import ProviderError

    try:
        await asyncio.to_thread(session.build)
    except ProviderError as exc:
        err.print(f"co-tui: {exc}", markup=False)
        return EXIT_FAILED
    bundle, deps = session.built()
    label = _model_label(bundle, model)
    tools = await tool_definitions(bundle.agent, deps)
    cases = _selected_cases(options, tools, err)
    if cases is None:
        return EXIT_USAGE
    if not await _start_local(session, err):
        return EXIT_FAILED
    model_settings = _eval_settings(bundle, options)
    err.print(f"eval: {len(cases)} case(s) x {options.repeat} on {label}", markup=False)
    results = await _run_with_progress(session, cases, tools, model_settings, options, err)
    return _report(label, results, options, _run_info(options, model_settings), out, err)


def _selected_cases(
    options: EvalOptions, tools: dict[str, Any], err: Console
) -> list[EvalCase] | None:
    """The cases to run; None (the problem printed) for a malformed file or no match."""
    try:
        cases = select_cases(load_cases(options.cases_file, parameters(tools)), options.patterns)
    except CasesError as exc:
        err.print("co-tui: the cases file is malformed:", markup=False)
        for problem in exc.problems:
            err.print(f"  {problem}", markup=False)
        return None
    if not cases:
        err.print(f"co-tui: no case matches {options.patterns!r}", markup=False)
        return None
    return cases


def _run_info(options: EvalOptions, model_settings: dict[str, Any]) -> dict[str, Any]:
    return {
        "cases_file": str(options.cases_file),
        "repeat": options.repeat,
        "temperature": options.temperature,
        "seed": options.seed,
        "max_tokens": model_settings.get("max_tokens"),
        "timeout_s": options.timeout,
        "selected": options.patterns,
    }


def _eval_settings(bundle: Any, options: EvalOptions) -> dict[str, Any]:
    settings: dict[str, Any] = dict(bundle.model_settings or {})
    if options.temperature is not None:
        settings["temperature"] = options.temperature
    local = bundle.resolved is not None and bundle.resolved.provider == "local"
    cap = options.max_tokens or (LOCAL_MAX_TOKENS if local else None)
    if cap is not None:
        settings["max_tokens"] = cap
    return settings


async def _start_local(session: ChatSession, err: Console) -> bool:
    """Start the embedded model first, so its load time is not charged to the first case."""
    from co_tui.llm.local.provider import LocalServerError, headless_progress

    try:
        await session.start_model(headless_progress(sys.stderr))
    except LocalServerError as exc:
        err.print(f"co-tui: {exc}", markup=False)
        return False
    return True


async def _run_with_progress(
    session: ChatSession,
    cases: list[EvalCase],
    tools: dict[str, Any],
    model_settings: dict[str, Any],
    options: EvalOptions,
    err: Console,
) -> list[CaseResult]:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("eval", total=len(cases) * options.repeat)

        def advance(case: EvalCase, repeat: int, outcome: Outcome) -> None:
            progress.update(task, advance=1, description=f"eval {case.id}")

        return await run_cases(
            session,
            cases,
            tools=tools,
            model_settings=model_settings,  # type: ignore[arg-type]
            repeat=options.repeat,
            seed=options.seed,
            timeout=options.timeout,
            on_outcome=advance,
        )


def _report(
    label: str,
    results: list[CaseResult],
    options: EvalOptions,
    run_info: dict[str, Any],
    out: Console,
    err: Console,
) -> int:
    scores = dimension_scores(results)
    out.print(scores_table(scores, options.repeat, benign_served(results)))
    failures = failures_table(results)
    if failures is not None:
        out.print(failures)
    folder = options.cases_file.parent
    payload = results_payload(label, results, run_info)
    results_path = (options.results_dir or folder) / f"results-{file_stem(label)}.json"
    write_results(results_path, payload)
    out.print(f"results: {results_path}", markup=False)
    baselines, problems = find_baselines(folder)
    for problem in problems:
        err.print(f"co-tui: skipped a baseline: {problem}", markup=False)
    current = {d: s.score for d, s in scores.items()}
    out.print(matrix_table(baselines, label, current))
    verdict = gate(label, results, baselines, options.max_degradation)
    if options.save_baseline:
        path = folder / f"baseline-{file_stem(label)}.json"
        write_results(path, payload)
        out.print(f"baseline saved: {path} (the gate is not applied when saving)", markup=False)
        return EXIT_OK
    if verdict.baseline is None:
        out.print(
            f"gate: no baseline for {label} in {folder}; nothing to compare (passes)", markup=False
        )
        return EXIT_OK
    out.print(gate_table(verdict))
    if not verdict.passed:
        dims = ", ".join(f"{r.dimension} {r.delta:+.1f}" for r in verdict.failed_rows)
        out.print(
            f"gate: FAILED ({dims}; more than {options.max_degradation:g} points down)",
            markup=False,
        )
        return EXIT_FAILED
    out.print("gate: passed", markup=False)
    return EXIT_OK
