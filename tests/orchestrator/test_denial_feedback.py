"""A denial can carry the user's words (the dialog's "no, and tell it what to do instead"):
the model reads them as the call's result, quoted as the user's, with no terminal sequence;
the decision carries them; the session store keeps them like any denial."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ToolReturnPart

from co_tui.protocol.frontend import (
    DENIED_MESSAGE,
    ApprovalAnswer,
    ApprovalDecision,
    denied_message,
)
from co_tui.protocol.recording import RecordingFrontend
from co_tui.store.recorder import SessionRecorder
from co_tui.store.session_store import SessionStore
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps

HOSTILE_WORDS = "use \x1b[31muv\x1b[0m instead\x1b]52;c;cm0gLXJmIH4=\x07 of pip\u202e\n please"
PLAIN = "use uv instead of pip please"
EXPECTED = f'The user denied this action and said what to do instead, in their words: "{PLAIN}"'


def returns_seen(model: ScriptedModel) -> list[ToolReturnPart]:
    """The tool results in the last request the model was sent."""
    last = model.seen[-1][-1]
    assert isinstance(last, ModelRequest)
    return [p for p in last.parts if isinstance(p, ToolReturnPart)]


async def test_the_model_reads_the_users_words_and_the_store_keeps_them(tmp_path: Path) -> None:
    model = ScriptedModel([Call("run_shell_command", {"cmd": "pip install requests"}, "c1")])
    store = SessionStore(tmp_path / "s.db")
    recorder = SessionRecorder(store, "s1", cwd=tmp_path)
    recorder.begin_turn("install requests")
    frontend = RecordingFrontend([ApprovalAnswer(ApprovalDecision.DENY, feedback=HOSTILE_WORDS)])
    result = await run_turn(
        make_bundle(model.model).agent,
        "install requests",
        deps=make_deps(tmp_path),
        history=[],
        frontend=frontend,
        on_checkpoint=recorder.checkpoint,
        journal=recorder,
    )
    assert result.ok
    [seen] = returns_seen(model)  # the request after the denial
    assert (seen.tool_call_id, seen.outcome, seen.content) == ("c1", "denied", EXPECTED)
    [record] = frontend.of("approval")
    assert (record.decision, record.feedback) == ("deny", PLAIN)
    [shown] = frontend.of("tool_result")
    assert shown.status == "denied"

    loaded = SessionStore(store.path).load("s1")
    stored = [
        p
        for m in loaded.messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    assert [(p.tool_call_id, p.content) for p in stored] == [("c1", EXPECTED)]
    assert store.decisions("s1") == {"c1": "deny"}


async def test_a_denial_without_words_reads_as_before(tmp_path: Path) -> None:
    model = ScriptedModel([Call("run_shell_command", {"cmd": "rm -rf build"}, "c1")])
    frontend = RecordingFrontend([ApprovalAnswer(ApprovalDecision.DENY, feedback=" \x1b[0m ")])
    await run_turn(
        make_bundle(model.model).agent,
        "go",
        deps=make_deps(tmp_path),
        history=[],
        frontend=frontend,
    )
    [seen] = returns_seen(model)
    assert seen.content == DENIED_MESSAGE
    assert frontend.of("approval")[0].feedback == ""


def test_the_words_are_one_plain_line_of_bounded_length() -> None:
    message = denied_message("x" * 5000 + "\r\n\x1b[2J")
    assert "\x1b" not in message and "\n" not in message and "\r" not in message
    assert len(message) < 600
