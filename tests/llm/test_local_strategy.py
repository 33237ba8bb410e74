"""The embedded model's next step (answer, choose, call): no server needed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.evals.runner import tool_definitions
from co_tui.llm.local.arguments import arguments_schema, parse_arguments
from co_tui.llm.local.shortlist import SHORTLIST_SIZE, Shortlister, terms
from co_tui.llm.local.strategy import (
    MAX_TOOL_ROUNDS,
    Answer,
    Call,
    Choose,
    Decline,
    Step,
    ToolChoice,
    next_step,
)
from tests.conftest import ROOT
from tests.helpers import make_deps

LOCAL_PACKAGE = ROOT / "src" / "co_tui" / "llm" / "local"


@pytest.fixture
async def tools(tmp_path: Path) -> list[ToolDefinition]:
    bundle = build_agent(Settings(), model=TestModel(), all_approval=True, every_tool=True)
    return list((await tool_definitions(bundle.agent, make_deps(tmp_path))).values())


WEATHER = ToolDefinition(
    name="get_forecast",
    description="Weather forecast for a city: temperature, rain and wind for the coming days.",
    parameters_json_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city's name"},
            "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
        },
        "required": ["city"],
    },
)


def asked(text: str) -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart(text)])]


def after_call(
    text: str, tool: str, args: dict[str, object], result: str, outcome: str = "success"
) -> list[ModelMessage]:
    call = ToolCallPart(tool, args, "c1")
    returned = ToolReturnPart(tool, result, "c1", outcome=outcome)  # type: ignore[arg-type]
    return [*asked(text), ModelResponse(parts=[call]), ModelRequest(parts=[returned])]


def step(
    messages: list[ModelMessage],
    tools: list[ToolDefinition],
    choice: ToolChoice = "model",
    allow_text: bool = True,
) -> Step:
    return next_step(messages, tools, Shortlister(tools), allow_text=allow_text, choice=choice)


async def test_a_new_request_is_put_to_the_model_with_a_shortlist_answer_and_decline(
    tools: list[ToolDefinition],
) -> None:
    chosen = step(asked("Search my notes for kubernetes"), tools)
    assert isinstance(chosen, Choose)
    assert "search_notes" in [t.name for t in chosen.tools]
    assert len(chosen.tools) <= SHORTLIST_SIZE
    assert chosen.options[:2] == ["answer", "decline"]
    assert chosen.schema == {"enum": chosen.options}  # the model can write nothing else
    for option in chosen.options:
        assert f"- {option}:" in chosen.prompt
    assert "Search my notes for kubernetes" in chosen.prompt


async def test_what_the_model_picks_becomes_the_step(tools: list[ToolDefinition]) -> None:
    chosen = step(asked("Search my notes for kubernetes"), tools)
    assert isinstance(chosen, Choose)
    picked = chosen.picked("search_notes")
    assert isinstance(picked, Call) and picked.tool.name == "search_notes"
    assert isinstance(chosen.picked("decline"), Decline)
    assert isinstance(chosen.picked("answer"), Answer)
    # a name outside the shortlist (or garbage) is never called
    assert isinstance(chosen.picked("run_shell_command"), Answer)
    assert isinstance(chosen.picked(""), Answer)


async def test_retrieval_alone_calls_its_first_candidate_or_answers(
    tools: list[ToolDefinition],
) -> None:
    chosen = step(asked("Search my notes for kubernetes"), tools, "retrieval")
    assert isinstance(chosen, Call) and chosen.tool.name == "search_notes"
    assert isinstance(step(asked("Hello! How are you?"), tools, "retrieval"), Answer)


async def test_a_random_pick_is_among_the_shortlist_or_answer_and_repeatable(
    tools: list[ToolDefinition],
) -> None:
    request = "Search my notes for kubernetes"
    shortlist = {c.tool.name for c in Shortlister(tools).shortlist(request)}
    picks = [step(asked(request), tools, "random") for _ in range(3)]
    assert picks[0] == picks[1] == picks[2]
    assert isinstance(picks[0], Answer) or picks[0].tool.name in shortlist  # type: ignore[union-attr]


async def test_nothing_to_choose_from_is_answered(tools: list[ToolDefinition]) -> None:
    assert isinstance(step(asked("Hello!"), tools), Answer)


async def test_the_arguments_are_held_to_the_tools_own_schema(
    tools: list[ToolDefinition],
) -> None:
    shell = next(t for t in tools if t.name == "run_shell_command")
    chosen = step(asked("What files are here?"), tools)
    assert isinstance(chosen, Choose)
    call = Choose(chosen.request, (shell,)).picked("run_shell_command")
    assert isinstance(call, Call)
    schema = call.schema
    assert set(schema["properties"]) == set(shell.parameters_json_schema["properties"])
    # any value the schema allows: no word list, only a bound on length
    assert schema["properties"]["cmd"]["type"] == "string"
    assert schema["properties"]["cmd"]["maxLength"] <= 1000
    assert "enum" not in schema["properties"]["cmd"]
    assert "What files are here?" in call.prompt
    assert "- cmd (string, required)" in call.prompt


def test_an_enum_stays_an_enum_and_a_reply_that_is_not_an_object_is_sent_back() -> None:
    schema = arguments_schema(WEATHER)
    assert schema["properties"]["units"] == WEATHER.parameters_json_schema["properties"]["units"]
    assert parse_arguments('{"city": "Oslo"}') == {"city": "Oslo"}
    assert parse_arguments('["Oslo"]') == '["Oslo"]'
    assert parse_arguments('{"city": "Os') == '{"city": "Os'


def test_arguments_stopped_in_a_loop_keep_one_pass_and_close() -> None:
    """The engine stopped where the arguments began to loop: the loop is kept once and the
    JSON closed there, so the call is asked for (or sent back) with what the model meant."""
    file_id = '{\n  "file_id": "7XyZ-plan' + ".json" * 40
    assert parse_arguments(file_id, loop_cut=True) == {"file_id": "7XyZ-plan.json"}
    said = "Please remind me that the boiler service is due. "
    memory = '{"content": "The boiler is due in May. ' + said * 6 + "Please rem"
    expected = "The boiler is due in May. " + said.rstrip()
    assert parse_arguments(memory, loop_cut=True) == {"content": expected}
    posted = '{"channel": "general", "text": "standup in 5", "thread_ts": "10' + ".1" * 70
    assert parse_arguments(posted, loop_cut=True) == {
        "channel": "general",
        "text": "standup in 5",
        "thread_ts": "10.1",
    }
    # Cut at the token cap without a loop: unfinished, never closed by guesswork.
    assert parse_arguments('{"cmd": "rm -rf /tmp/build') == '{"cmd": "rm -rf /tmp/build'
    # A loop in a key, or in no JSON at all, is sent back as it is.
    assert parse_arguments("lalala " * 30, loop_cut=True) == "lalala " * 30


async def test_a_tool_never_seen_is_shortlisted_by_what_it_says_of_itself(
    tools: list[ToolDefinition],
) -> None:
    everything = [*tools, WEATHER]
    chosen = step(asked("Will it rain in Bergen tomorrow?"), everything)
    assert isinstance(chosen, Choose) and chosen.tools[0].name == "get_forecast"
    by_retrieval = step(asked("What's the weather forecast for Bergen?"), everything, "retrieval")
    assert isinstance(by_retrieval, Call) and by_retrieval.tool.name == "get_forecast"


def test_terms_fold_case_stems_and_shapes() -> None:
    assert terms("Search the EMAILS") == ["search", "email"]
    assert "<url>" in terms("open https://example.com/a")
    assert terms("Busca en internet") == ["busca", "en", "internet"]


async def test_after_a_result_the_model_answers_from_it(tools: list[ToolDefinition]) -> None:
    messages = after_call("list the files", "run_shell_command", {"cmd": "ls"}, "a.txt")
    assert isinstance(step(messages, tools), Answer)
    failed = after_call(
        "list the files", "run_shell_command", {"cmd": "lss"}, "not found", "failed"
    )
    assert isinstance(step(failed, tools), Answer)


async def test_a_call_sent_back_is_made_again_with_the_feedback(
    tools: list[ToolDefinition],
) -> None:
    feedback = "Note 'alpha' not found. Did you mean 'projects/alpha.md'?"
    messages = after_call("Read my alpha note", "read_note", {"filename": "alpha"}, feedback,
                          "retried")  # fmt: skip
    again = step(messages, tools)
    assert isinstance(again, Call) and again.tool.name == "read_note"
    assert feedback in again.prompt


async def test_feedback_naming_one_other_tool_sends_the_call_there(
    tools: list[ToolDefinition],
) -> None:
    one = "'budget' is not a file id: call search_drive first to find the file's id."
    messages = after_call("Read my budget", "read_drive_file", {"file_id": "budget"}, one,
                          "retried")  # fmt: skip
    moved = step(messages, tools)
    assert isinstance(moved, Call) and moved.tool.name == "search_drive"
    several = "Not available: notes. Choose from: list_notes, read_note, search_notes."
    messages = after_call("Delegate it", "delegate", {"task": "x", "tools": ["notes"]}, several,
                          "retried")  # fmt: skip
    stays = step(messages, tools)
    assert isinstance(stays, Call) and stays.tool.name == "delegate"


async def test_retries_stop_after_the_round_limit(tools: list[ToolDefinition]) -> None:
    messages = asked("Read my alpha note")
    for n in range(MAX_TOOL_ROUNDS):
        call = ToolCallPart("read_note", {"filename": f"a{n}"}, f"c{n}")
        back = ToolReturnPart("read_note", "not found", f"c{n}", outcome="retried")
        messages += [ModelResponse(parts=[call]), ModelRequest(parts=[back])]
    assert isinstance(step(messages, tools), Answer)


async def test_when_text_is_not_allowed_only_tools_are_options(
    tools: list[ToolDefinition],
) -> None:
    chosen = step(asked("Search my notes and the web"), tools, allow_text=False)
    assert isinstance(chosen, Choose) and "answer" not in chosen.options
    assert "decline" not in chosen.options and "- answer:" not in chosen.prompt
    hello = step(asked("Hello!"), tools, allow_text=False)  # nothing shortlisted: any tool
    assert isinstance(hello, Choose | Call)
    for choice in ("retrieval", "random"):
        assert isinstance(step(asked("Hello!"), tools, choice, allow_text=False), Call)  # type: ignore[arg-type]


def _folded(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def test_nothing_in_the_local_package_derives_from_an_eval_case() -> None:
    """No eval prompt (case, punctuation and spacing folded) appears in the embedded model's
    code or data: nothing there was written from the cases it is scored on."""
    shipped = " ".join(
        _folded(p.read_text(encoding="utf-8"))
        for p in LOCAL_PACKAGE.rglob("*")
        if p.is_file() and p.suffix in (".py", ".jsonl", ".json", ".txt", ".md")
    )
    assert not list(LOCAL_PACKAGE.glob("*.jsonl"))  # no per-intent data ships at all
    prompts = [
        json.loads(line)["prompt"]
        for cases in (ROOT / "evals").rglob("tool_calling.jsonl")
        for line in cases.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("//")
    ]
    found = [p for p in prompts if p and len(_folded(p)) > 12 and _folded(p) in shipped]
    assert found == []
