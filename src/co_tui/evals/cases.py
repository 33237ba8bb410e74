"""Golden tool-calling cases: load and validate `evals/tool_calling.jsonl`, select a subset.

One JSON object per line:

    {"id": "notes-read-exact", "dimension": "arg_extraction",
     "prompt": "Open my note projects/alpha.md",
     "expect_tool": "read_note", "expect_args": {"filename": "projects/alpha.md"},
     "arg_match": "exact"}

`expect_tool: null` means the model must answer without calling a tool. A case may carry a
scripted `history` that the run continues from (error_recovery: a failed call, then the
model's next move is scored):

    "history": [{"role": "user", "content": "..."},
                {"role": "call", "tool": "read_note", "args": {"filename": "alpha"}},
                {"role": "retry", "content": "Note 'alpha' not found ..."}]

`retry` is what a tool raising ModelRetry produces; `error` is a failed tool result;
`result` a successful one; `assistant` a text answer. A `prompt` of null continues the
history as it is (it must then end with a tool result).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

Dimension = Literal[
    "tool_selection",
    "arg_extraction",
    "refusal",
    "error_recovery",
    "answer",
    "clarify",
    "multilingual",
    "multi_step",
]
DIMENSIONS: tuple[Dimension, ...] = get_args(Dimension)
# A request that no tool serves: the answer is judged on its text (declined, answered, asked).
TEXT_DIMENSIONS: frozenset[Dimension] = frozenset({"refusal", "answer", "clarify"})
# The first step of the request is a call of `expect_tool`; its arguments are not judged.
CHOICE_DIMENSIONS: frozenset[Dimension] = frozenset(
    {"tool_selection", "multilingual", "multi_step"}
)
ArgMatch = Literal["exact", "subset"]
ARG_MATCHES: tuple[ArgMatch, ...] = ("exact", "subset")
HISTORY_ROLES = ("user", "assistant", "call", "result", "error", "retry")
_FAILED_ROLES = ("error", "retry")
_KNOWN_KEYS = {
    "id",
    "dimension",
    "prompt",
    "expect_tool",
    "expect_args",
    "arg_match",
    "history",
    "note",
}


class CasesError(Exception):
    """The cases file is malformed; `problems` holds one `file:line: message` per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class HistoryStep:
    role: str
    content: str = ""
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EvalCase:
    id: str
    dimension: Dimension
    prompt: str | None
    expect_tool: str | None
    expect_args: dict[str, Any] = field(default_factory=dict)
    arg_match: ArgMatch = "subset"
    history: tuple[HistoryStep, ...] = ()
    note: str = ""
    line: int = 0

    def history_messages(self) -> list[ModelMessage]:
        return history_messages(self.history)


def history_messages(steps: Iterable[HistoryStep]) -> list[ModelMessage]:
    """The scripted history as pydantic-ai messages (tool results answer the latest call)."""
    messages: list[ModelMessage] = []
    pending: list[ModelRequestPart] = []
    last_call: ToolCallPart | None = None
    for n, step in enumerate(steps):
        if step.role == "user":
            pending.append(UserPromptPart(step.content))
        elif step.role in ("assistant", "call"):
            if pending:
                messages.append(ModelRequest(parts=pending))
                pending = []
            if step.role == "assistant":
                messages.append(ModelResponse(parts=[TextPart(step.content)]))
            else:
                last_call = ToolCallPart(step.tool, dict(step.args), tool_call_id=f"eval_call_{n}")
                messages.append(ModelResponse(parts=[last_call]))
        else:
            assert last_call is not None, "validated: a tool result follows a call"
            outcome = {"result": "success", "error": "failed", "retry": "retried"}[step.role]
            pending.append(
                ToolReturnPart(
                    last_call.tool_name,
                    step.content,
                    last_call.tool_call_id,
                    outcome=outcome,  # type: ignore[arg-type]
                )
            )
    if pending:
        messages.append(ModelRequest(parts=pending))
    return messages


def _problem(path: Path, line: int, message: str) -> str:
    return f"{path}:{line}: {message}"


def _parse_history(raw: Any, tools: Mapping[str, set[str]], where: str) -> list[HistoryStep]:
    """Steps of a `history` list; raises ValueError with what is wrong."""
    if not isinstance(raw, list):
        raise ValueError(f"{where} must be a list")
    steps: list[HistoryStep] = []
    seen_call = False
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{at} must be an object")
        role = item.get("role")
        if role not in HISTORY_ROLES:
            raise ValueError(f"{at}.role must be one of {', '.join(HISTORY_ROLES)}")
        if role == "call":
            tool, args = item.get("tool"), item.get("args", {})
            if not isinstance(tool, str) or tool not in tools:
                raise ValueError(f"{at}.tool {tool!r} is not a registered tool")
            if not isinstance(args, dict):
                raise ValueError(f"{at}.args must be an object")
            steps.append(HistoryStep("call", tool=tool, args=args))
            seen_call = True
            continue
        content = item.get("content")
        if not isinstance(content, str) or not content:
            raise ValueError(f"{at}.content must be a non-empty string")
        if role in ("result", "error", "retry") and not seen_call:
            raise ValueError(f"{at} is a tool result with no call before it")
        steps.append(HistoryStep(role, content=content))
    return steps


def _parse_case(data: Any, tools: Mapping[str, set[str]]) -> EvalCase:
    """One case from a decoded line; raises ValueError with what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("a case must be a JSON object")
    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise ValueError(f"unknown field(s): {', '.join(unknown)}")
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id.strip():
        raise ValueError("'id' must be a non-empty string")
    dimension = data.get("dimension")
    if dimension not in DIMENSIONS:
        raise ValueError(f"'dimension' must be one of {', '.join(DIMENSIONS)}, not {dimension!r}")
    if "expect_tool" not in data:
        raise ValueError("'expect_tool' is required (null: no tool must be called)")
    tool = data["expect_tool"]
    if tool is not None and tool not in tools:
        raise ValueError(f"'expect_tool' {tool!r} is not a registered tool")
    args = data.get("expect_args", {})
    if not isinstance(args, dict):
        raise ValueError("'expect_args' must be an object")
    if tool is None and args:
        raise ValueError("'expect_args' must be empty when 'expect_tool' is null")
    if tool is not None:
        extra = sorted(set(args) - tools[tool])
        if extra:
            raise ValueError(f"{tool} has no parameter(s) {', '.join(extra)}")
    arg_match = data.get("arg_match", "subset")
    if arg_match not in ARG_MATCHES:
        raise ValueError(f"'arg_match' must be exact or subset, not {arg_match!r}")
    if dimension in TEXT_DIMENSIONS and tool is not None:
        raise ValueError(f"a {dimension} case must have 'expect_tool': null")
    if dimension in CHOICE_DIMENSIONS and tool is None:
        raise ValueError(f"a {dimension} case needs 'expect_tool'")
    if dimension == "arg_extraction" and (tool is None or (not args and arg_match != "exact")):
        raise ValueError(
            "an arg_extraction case needs 'expect_tool' and 'expect_args' "
            "(empty only with arg_match exact: no arguments)"
        )
    history = _parse_history(data.get("history", []), tools, "'history'")
    if dimension == "error_recovery" and not any(s.role in _FAILED_ROLES for s in history):
        raise ValueError(
            "an error_recovery case needs a failed call ('error' or 'retry') in its 'history'"
        )
    prompt = data.get("prompt")
    if prompt is None:
        if not history or history[-1].role not in ("result", "error", "retry"):
            raise ValueError("'prompt' may be null only when 'history' ends with a tool result")
    elif not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("'prompt' must be a non-empty string (or null after a tool result)")
    note = data.get("note", "")
    return EvalCase(case_id, dimension, prompt, tool, args, arg_match, tuple(history), str(note))


def load_cases(path: Path, tools: Mapping[str, set[str]]) -> list[EvalCase]:
    """Every case of `path`, checked against `tools` ({name: parameter names}).

    Raises CasesError listing every malformed line (with its number), not only the first."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CasesError([f"{path}: cannot read: {exc.strerror}"]) from None
    cases: list[EvalCase] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(
                _problem(path, number, f"not valid JSON: {exc.msg} (column {exc.colno})")
            )
            continue
        try:
            case = _parse_case(data, tools)
        except ValueError as exc:
            problems.append(_problem(path, number, str(exc)))
            continue
        if case.id in first_line:
            problems.append(
                _problem(
                    path, number, f"duplicate id {case.id!r} (first on line {first_line[case.id]})"
                )
            )
            continue
        first_line[case.id] = number
        cases.append(replace(case, line=number))
    if problems:
        raise CasesError(problems)
    if not cases:
        raise CasesError([f"{path}: no cases"])
    return cases


def select_cases(cases: list[EvalCase], patterns: str | None) -> list[EvalCase]:
    """Cases whose id matches any comma-separated pattern: an exact id, a glob (`shell-*`),
    or a substring. A pattern that is a dimension name selects that dimension."""
    if not patterns:
        return list(cases)
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]

    def matches(case: EvalCase, pattern: str) -> bool:
        if pattern == case.dimension or pattern == case.id:
            return True
        if any(ch in pattern for ch in "*?["):
            return fnmatch.fnmatchcase(case.id, pattern)
        return pattern in case.id

    return [c for c in cases if any(matches(c, p) for p in wanted)]
