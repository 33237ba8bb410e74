"""The embedded model's answer stops once it repeats itself (SmolLM2 wrote "The user denied
this action." a hundred times after a denial, 25 s of stream): the answer stream stops asking
for more after the fourth repeat. Prose, code, tables and rules, in any chunking, never stop.
The stream is the local model's own (`_AnswerStream`) around a FunctionModel's; no server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelRequest, TextPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui.llm.local.provider import _AnswerStream
from co_tui.llm.local.repetition import REPEATS, LoopWatch, repeated_tail, repeats_to_stop
from tests.conftest import ROOT
from tests.sizes import examples

DENIED = "The user denied this action.\n```\n"
TABLE = "| name | size |\n|------|------|\n" + "".join(f"| f{i} | {i} |\n" for i in range(40))
CODE = "def f():\n" + "    pass\n" * 8 + "\n" + "# " + "=" * 78 + "\n" + "x = 1\n" * 6
LEGIT = [
    (ROOT / "README.md").read_text(encoding="utf-8")[:6000],
    (ROOT / "docs" / "local-model.md").read_text(encoding="utf-8")[:6000],
    TABLE,
    CODE,
    "-" * 500,
    "I am sorry. " * 5 + "That is all.",
]


async def streamed(pieces: list[str]) -> tuple[str, int]:
    """The answer the local model's stream gives for a model that sends `pieces`, and how
    many of them the model was asked for."""
    asked: list[str] = []

    async def stream_function(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in pieces:
            asked.append(piece)
            yield piece

    model = FunctionModel(stream_function=stream_function)
    params = ModelRequestParameters()
    messages: list[ModelMessage] = [ModelRequest.user_text_prompt("hi")]
    async with model.request_stream(messages, None, params) as inner:
        stream = _AnswerStream(model_request_parameters=params, inner=inner, prompt="hi")
        async for _ in stream:
            pass
    parts = stream.get().parts
    text = "".join(p.content for p in parts if isinstance(p, TextPart))
    return text, len(asked)


async def test_a_looping_answer_stops_after_its_fourth_repeat() -> None:
    pieces = ["I cannot run that. ", *([DENIED] * 300)]
    text, asked = await streamed(pieces)
    assert text.count("The user denied this action.") == REPEATS
    assert asked <= REPEATS + 3  # the model is asked for nothing more once the loop shows
    assert text.startswith("I cannot run that. ")


async def test_a_loop_inside_one_line_stops_too() -> None:
    """A sentence repeated without line breaks, in pieces that cut across it."""
    loop = "I'm a professional at work, and I'm a professional at work. " * 60
    text, asked = await streamed([loop[i : i + 7] for i in range(0, len(loop), 7)])
    assert len(text) < 5 * 60 and asked < len(loop) // 7


async def test_a_short_piece_stops_once_it_fills_a_line() -> None:
    """A loop of a few characters (CI's SmolLM2 wrote " -sL -o curl" to the token cap) is
    caught after 120 characters of it, not after four repeats, which would end real text."""
    piece = " -sL -o curl"
    text, asked = await streamed(['curl -X PUT -o "ls.txt" -p "curl', *([piece] * 200)])
    assert repeats_to_stop(piece) == 10
    assert text.count(piece) == repeats_to_stop(piece)
    assert asked <= repeats_to_stop(piece) + 3


async def test_prose_code_tables_and_rules_stream_whole() -> None:
    for answer in LEGIT:
        text, _ = await streamed([answer[i : i + 5] for i in range(0, len(answer), 5)])
        assert text == answer


@settings(max_examples=examples(60), deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=400))
def test_any_chunking_finds_the_loop_and_spares_the_rest(cuts: list[int]) -> None:
    for answer, is_loop in [(DENIED * 6, True), *((legit, False) for legit in LEGIT)]:
        watch = LoopWatch()
        seen, at = False, 0
        for size in [*cuts, len(answer)]:
            if at >= len(answer):
                break
            seen = watch.looping(answer[at : at + size]) or seen
            at += size
        assert seen == is_loop, answer[:80]


def test_a_loop_without_letters_stops_arguments_but_not_answers() -> None:
    """In a tool's arguments any piece that loops counts (SmolLM2 wrote thread stamps such as
    "10.1.1.1.1…" to the token cap); in an answer only one with a letter does."""
    stamp = '{"channel": "general", "text": "standup", "thread_ts": "10' + ".1" * 80
    assert repeated_tail(stamp, letters_only=False) is not None
    assert repeated_tail(stamp) is None
    file_id = '{"file_id": "9QrSt-notes' + ".json" * 40
    assert repeated_tail(file_id, letters_only=False) is not None


@settings(max_examples=examples(30), deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=400))
def test_arguments_that_do_not_loop_are_never_cut(cuts: list[int]) -> None:
    """Real arguments, as the model writes them: a note with a table and code, a command, a
    URL, ids, a long message. Rules shorter than 120 characters stay whole too."""
    notes = [legit for legit in LEGIT if repeated_tail(legit, letters_only=False) is None]
    assert len(notes) == len(LEGIT) - 1  # only the 500-dash rule is a loop without letters
    arguments = [
        *(json.dumps({"filename": "notes/plan.md", "content": note}) for note in notes),
        json.dumps({"cmd": "git log --oneline -n 20 && ls -la src/co_tui/llm/local"}),
        json.dumps({"url": "https://docs.python.org/3/library/asyncio-task.html#coroutines"}),
        json.dumps({"file_id": "1QwErTy-0B7_abcXYZ_2025-12-20", "ids": list(range(100, 160))}),
        json.dumps({"text": "Meeting moved to 3pm. " + "=" * 100 + " Agenda: budget, hiring."}),
    ]
    for written in arguments:
        watch = LoopWatch(letters_only=False)
        at, seen = 0, False
        for size in [*cuts, len(written)]:
            if at >= len(written):
                break
            seen = watch.looping(written[at : at + size]) or seen
            at += size
        assert not seen, written[:80]


def test_the_repeated_piece_is_named() -> None:
    assert repeated_tail("Hello. " + DENIED * REPEATS) is not None
    assert repeated_tail("Hello. " + DENIED * (REPEATS - 1)) is None
    assert repeated_tail(Path(__file__).read_text(encoding="utf-8")) is None
