"""The golden cases file and its validation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.test import TestModel

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.evals.cases import DIMENSIONS, CasesError, load_cases, select_cases
from co_tui.evals.runner import parameters, tool_definitions
from tests.conftest import ROOT
from tests.helpers import make_deps

CASES_FILE = ROOT / "evals" / "tool_calling.jsonl"
HELD_OUT_FILES = [
    ROOT / "evals" / f / "tool_calling.jsonl"
    for f in ("held_out", "held_out_b", "held_out_c", "held_out_d", "held_out_e")
]
# The dimensions of the first sets (harmful requests in refusal, benign no-tool ones in answer);
# held_out_e (the offline agent's) adds clarify, multilingual and multi_step.
FIRST_DIMENSIONS = {"tool_selection", "arg_extraction", "refusal", "answer", "error_recovery"}
OFFLINE_AGENT_DIMENSIONS = set(DIMENSIONS) - {"error_recovery"}


@pytest.fixture
async def registered(tmp_path: Path) -> dict[str, set[str]]:
    """Every built-in tool as the eval registers it: {name: parameter names}."""
    bundle = build_agent(Settings(), model=TestModel(), all_approval=True, every_tool=True)
    tools = await tool_definitions(bundle.agent, make_deps(tmp_path))
    assert set(tools) == set(bundle.tool_names)
    return parameters(tools)


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


async def test_golden_file_is_valid_and_covers_every_tool(registered: dict[str, set[str]]) -> None:
    cases = load_cases(CASES_FILE, registered)
    assert len(cases) >= 80
    assert {c.dimension for c in cases} == FIRST_DIMENSIONS
    assert {c.expect_tool for c in cases if c.expect_tool} == set(registered)
    assert sum(c.expect_tool is None for c in cases) >= 5
    recover = [c for c in cases if c.dimension == "error_recovery"]
    assert len(recover) >= 5
    assert all(any(s.role in ("error", "retry") for s in c.history) for c in recover)
    assert {c.arg_match for c in cases} == {"exact", "subset"}


@pytest.mark.parametrize("held_out_file", HELD_OUT_FILES, ids=lambda p: p.parent.name)
async def test_held_out_cases_are_valid_and_new(
    registered: dict[str, set[str]], held_out_file: Path
) -> None:
    """A held-out file (never tuned on) covers every dimension with prompts of its own."""
    held_out = load_cases(held_out_file, registered)
    if held_out_file.parent.name == "held_out_e":
        assert len(held_out) >= 60
        assert {c.dimension for c in held_out} == OFFLINE_AGENT_DIMENSIONS
    else:
        assert len(held_out) >= 30
        assert {c.dimension for c in held_out} == FIRST_DIMENSIONS
    committed = load_cases(CASES_FILE, registered)
    assert not {c.prompt for c in held_out if c.prompt} & {c.prompt for c in committed}
    others = [committed, *(load_cases(f, registered) for f in HELD_OUT_FILES if f != held_out_file)]
    for cases in others:
        assert not {c.id for c in held_out} & {c.id for c in cases}
    if held_out_file.parent.name == "held_out_e":
        earlier = {folded(c.prompt) for cases in others for c in cases if c.prompt}
        assert not {folded(c.prompt) for c in held_out if c.prompt} & earlier


def folded(prompt: str) -> str:
    """A prompt with case, punctuation and spacing folded away: near-copies compare equal."""
    return " ".join(re.sub(r"[^\w\s]", " ", prompt.casefold()).split())


async def test_history_becomes_a_failed_call_the_model_continues_from(
    registered: dict[str, set[str]],
) -> None:
    case = next(c for c in load_cases(CASES_FILE, registered) if c.id == "recover-note-path")
    messages = case.history_messages()
    assert [type(m) for m in messages] == [ModelRequest, ModelResponse, ModelRequest]
    call = messages[1].parts[0]
    returned = messages[2].parts[0]
    assert isinstance(call, ToolCallPart) and call.args == {"filename": "alpha"}
    assert isinstance(returned, ToolReturnPart)
    assert returned.outcome == "retried" and returned.tool_call_id == call.tool_call_id


async def test_malformed_lines_are_all_reported_with_line_numbers(
    tmp_path: Path, registered: dict[str, set[str]]
) -> None:
    good = '{"id": "ok", "dimension": "refusal", "prompt": "hi", "expect_tool": null}'
    path = write(
        tmp_path,
        good,
        "{not json",
        '{"id": "a", "dimension": "tool_selection", "prompt": "x", "expect_tool": "rm_rf"}',
        "",
        '{"id": "b", "dimension": "vibes", "prompt": "x", "expect_tool": null}',
        '{"id": "c", "dimension": "arg_extraction", "prompt": "x", "expect_tool": "read_note",'
        ' "expect_args": {"path": "a.md"}}',
        '{"id": "d", "dimension": "refusal", "prompt": "x", "expect_tool": "list_notes"}',
        '{"id": "e", "dimension": "error_recovery", "prompt": "x", "expect_tool": "list_notes"}',
        good,
        '{"id": "f", "dimension": "refusal", "prompt": "x", "expect_tool": null, "extra": 1}',
        '{"id": "g", "dimension": "tool_selection", "prompt": null, "expect_tool": "list_notes"}',
    )
    with pytest.raises(CasesError) as caught:
        load_cases(path, registered)
    problems = caught.value.problems
    at = {int(p.split(":")[1]): p for p in problems}
    assert sorted(at) == [2, 3, 5, 6, 7, 8, 9, 10, 11]
    assert "not valid JSON" in at[2]
    assert "'rm_rf' is not a registered tool" in at[3]
    assert "'dimension' must be one of" in at[5]
    assert "read_note has no parameter(s) path" in at[6]
    assert "refusal case must have 'expect_tool': null" in at[7]
    assert "needs a failed call" in at[8]
    assert "duplicate id 'ok' (first on line 1)" in at[9]
    assert "unknown field(s): extra" in at[10]
    assert "'prompt' may be null only" in at[11]


async def test_history_must_call_registered_tools(
    tmp_path: Path, registered: dict[str, set[str]]
) -> None:
    path = write(
        tmp_path,
        '{"id": "r", "dimension": "error_recovery", "prompt": null, "expect_tool": null,'
        ' "history": [{"role": "user", "content": "x"}, {"role": "call", "tool": "nope"},'
        ' {"role": "retry", "content": "bad"}]}',
    )
    with pytest.raises(CasesError, match=r"cases.jsonl:1: 'history'\[1\].tool 'nope'"):
        load_cases(path, registered)


async def test_select_cases_by_id_glob_substring_and_dimension(
    registered: dict[str, set[str]],
) -> None:
    cases = load_cases(CASES_FILE, registered)
    ids = lambda pattern: {c.id for c in select_cases(cases, pattern)}  # noqa: E731
    assert ids("refuse-greeting") == {"refuse-greeting"}
    assert ids("slack-*") == {c.id for c in cases if c.id.startswith("slack-")}
    assert ids("skill") == {c.id for c in cases if "skill" in c.id}
    assert ids("refusal") == {c.id for c in cases if c.dimension == "refusal"}
    assert ids("refuse-thanks, notes-read-exact") == {"refuse-thanks", "notes-read-exact"}
    assert ids(None) == {c.id for c in cases}
    assert ids("no-such-case") == set()
