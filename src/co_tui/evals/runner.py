"""Run golden cases against a session's agent, whose every tool is deferred (nothing executes).

One model request per case: the run stops at the first DeferredToolRequests or text answer
(UsageLimits(request_limit=1)); when the first response would need a second request (an
unknown tool, arguments that fail validation), that first response is still what is scored.
The cases do not run as the session's turns (run_turn): a turn streams, asks for approvals
and runs the calls the permission rules approve, where a case must execute nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai import Agent, UsageLimitExceeded, UsageLimits, capture_run_messages
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from co_tui.context.deps import CoDeps
from co_tui.evals.cases import EvalCase
from co_tui.evals.scoring import CaseResult, Outcome, judge
from co_tui.session.chat import ChatSession

DEFAULT_TIMEOUT_S = 120.0
# A timeout says the machine was busy, not what the model would do: with greedy decoding the
# answer is the same on a second try, so one retry keeps a loaded CI box from failing the gate.
TIMEOUT_RETRIES = 1
TEXT_KEPT = 300  # characters of a text answer kept in the results file

Progress = Callable[[EvalCase, int, Outcome], None]


async def tool_definitions(agent: Agent[CoDeps, Any], deps: CoDeps) -> dict[str, ToolDefinition]:
    """The tools exactly as the model sees them (asked of a probe model; no provider call)."""
    seen: dict[str, ToolDefinition] = {}

    def probe(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.update({t.name: t for t in info.function_tools})
        return ModelResponse(parts=[TextPart("ok")])

    with agent.override(model=FunctionModel(probe)):
        await agent.run("list your tools", deps=deps)
    return seen


def parameters(tools: dict[str, ToolDefinition]) -> dict[str, set[str]]:
    return {
        name: set((t.parameters_json_schema or {}).get("properties") or {})
        for name, t in tools.items()
    }


def defaults(tool: ToolDefinition | None) -> dict[str, Any]:
    props = ((tool.parameters_json_schema if tool else None) or {}).get("properties") or {}
    return {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}


def first_move(messages: Sequence[ModelMessage], after: int) -> Outcome:
    """The first model response after the scripted history, as an Outcome."""
    for message in messages[after:]:
        if not isinstance(message, ModelResponse):
            continue
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                try:
                    args = part.args_as_dict()
                except ValueError:  # the model wrote arguments that are not JSON
                    args = {"_unparsed": str(part.args)}
                return Outcome(tool=part.tool_name, args=args)
        text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
        return Outcome(text=text[:TEXT_KEPT])
    return Outcome(error="the model gave no response")


async def run_case(
    agent: Agent[CoDeps, Any],
    case: EvalCase,
    *,
    deps: CoDeps,
    model_settings: ModelSettings | None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> Outcome:
    """The model's first move for `case`; any failure becomes an Outcome with `error`."""
    outcome = await _attempt(agent, case, deps=deps, model_settings=model_settings, timeout=timeout)
    for _ in range(TIMEOUT_RETRIES):
        if outcome.error is None or not outcome.error.startswith("timed out"):
            break
        outcome = await _attempt(
            agent, case, deps=deps, model_settings=model_settings, timeout=timeout
        )
    return outcome


async def _attempt(
    agent: Agent[CoDeps, Any],
    case: EvalCase,
    *,
    deps: CoDeps,
    model_settings: ModelSettings | None,
    timeout: float,
) -> Outcome:
    history = case.history_messages()
    start = time.monotonic()
    with capture_run_messages() as messages:
        try:
            await asyncio.wait_for(
                agent.run(
                    case.prompt,
                    message_history=history,
                    deps=deps,
                    model_settings=model_settings,
                    usage_limits=UsageLimits(request_limit=1),
                ),
                timeout,
            )
        except UsageLimitExceeded:
            pass  # the first response wanted a retry: it is still the move to score
        except TimeoutError:
            return Outcome(error=f"timed out after {timeout:g}s", seconds=time.monotonic() - start)
        except Exception as exc:  # provider errors and the like fail the case, not the eval
            message = f"{type(exc).__name__}: {exc}"
            return Outcome(error=message[:500], seconds=time.monotonic() - start)
    outcome = first_move(messages, len(history))
    return Outcome(
        outcome.tool, outcome.args, outcome.text, outcome.error, time.monotonic() - start
    )


async def run_cases(
    session: ChatSession,
    cases: Sequence[EvalCase],
    *,
    tools: dict[str, ToolDefinition],
    model_settings: ModelSettings | None = None,
    repeat: int = 1,
    seed: int | None = 0,
    timeout: float = DEFAULT_TIMEOUT_S,
    on_outcome: Progress | None = None,
) -> list[CaseResult]:
    """Every case `repeat` times, one after another, on the built session's agent and deps
    (its conversation is not used: each case brings its own). Repeat i runs with seed
    `seed + i`."""
    bundle, deps = session.built()
    agent = bundle.agent
    results = [CaseResult(case) for case in cases]
    for i in range(repeat):
        settings: dict[str, Any] = dict(model_settings or {})
        if seed is not None:
            settings["seed"] = seed + i
        for result in results:
            outcome = await run_case(
                agent,
                result.case,
                deps=deps,
                model_settings=settings,  # type: ignore[arg-type]
                timeout=timeout,
            )
            result.outcomes.append(outcome)
            tool_def = tools.get(result.case.expect_tool or "")
            result.verdicts.append(judge(result.case, outcome, defaults(tool_def)))
            if on_outcome is not None:
                on_outcome(result.case, i, outcome)
    return results
