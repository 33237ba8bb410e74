"""The morning briefing over the fake Google servers: code gathers, the model only
summarises, and the facts reach the user verbatim whatever the summary says."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from co_tui.protocol.recording import RecordingFrontend
from co_tui.session.jobs.briefing import NO_SUMMARY, run_briefing, usable
from co_tui.store.session_store import SessionStore
from tests.jobs.helpers import a_proposal, briefing_events, briefing_google, briefing_session
from tests.servers.google_fake import FakeGoogle


@pytest.fixture
def google() -> Iterator[FakeGoogle]:
    with briefing_google() as server:
        yield server


async def test_every_event_title_and_unread_subject_reaches_the_briefing_verbatim(
    tmp_path: Path, google: FakeGoogle
) -> None:
    frontend = RecordingFrontend()
    session = briefing_session(tmp_path, google, frontend, model="test")
    await session.start(None)
    waiting = a_proposal(args={"cmd": "git push origin main"})
    try:
        result = await run_briefing(
            session, TestModel(custom_output_text="A busy morning."), [waiting]
        )
    finally:
        await session.aclose()
    assert result.ok, result.error
    answer = result.output or ""
    first, summary, _ = answer.split("\n\n", 2)
    assert first == (
        "4 events in the next 24 hours; 1 unread mail; 1 note changed; "
        "1 proposal waits for your approval."
    )
    assert summary == "A busy morning."
    for event in briefing_events():
        assert event["summary"] in answer, event["summary"]
    assert "Quarterly planning (tomorrow)" not in answer  # outside the next 24 hours
    assert "Lunch on Friday?" in answer  # unread
    assert "Invoice 42" not in answer  # read
    assert "Groceries.md" in answer and "Trip 2025.md" not in answer
    assert waiting.seal.short_id in answer and "git push origin main" in answer
    # Gathered by read-only calls that ran without asking, and nothing else ran.
    assert frontend.approval_requests == []
    ran = [e.tool_name for e in frontend.of("tool_result")]
    assert ran == ["list_calendar_events", "search_emails"]
    stored = SessionStore().load(session.session_id).messages[-1]
    assert isinstance(stored, ModelResponse) and stored.text == answer  # in /resume


async def test_without_google_the_briefing_says_so_and_still_has_the_notes(
    tmp_path: Path,
) -> None:
    session = briefing_session(tmp_path, None, RecordingFrontend(), model="test")
    await session.start(None)
    try:
        result = await run_briefing(session, TestModel(custom_output_text="Quiet day."))
    finally:
        await session.aclose()
    answer = result.output or ""
    assert result.ok and "Groceries.md" in answer
    assert answer.count("Not available") == 2, answer
    assert answer.startswith("No calendar; no mail; 1 note changed;")


async def test_a_summary_that_fails_leaves_the_facts(tmp_path: Path, google: FakeGoogle) -> None:
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError("the model server went away")

    session = briefing_session(tmp_path, google, RecordingFrontend(), model="test")
    await session.start(None)
    try:
        result = await run_briefing(session, FunctionModel(broken))
    finally:
        await session.aclose()
    answer = result.output or ""
    assert answer.split("\n\n")[1] == NO_SUMMARY
    assert all(event["summary"] in answer for event in briefing_events())


async def test_a_summary_model_sees_no_tools_and_mail_text_cannot_add_a_call(
    tmp_path: Path, google: FakeGoogle
) -> None:
    """An event's title asks the assistant to mail the board minutes away: the summary
    request offers no tool, and the turn's calls are the two gathering ones."""
    offered: list[int] = []

    def summary(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append(len(info.function_tools))
        return ModelResponse(parts=[TextPart("Done as the calendar asked.")])

    frontend = RecordingFrontend()
    session = briefing_session(tmp_path, google, frontend, model="test")
    await session.start(None)
    try:
        await run_briefing(session, FunctionModel(summary))
    finally:
        await session.aclose()
    assert offered == [0]
    assert [e.tool_name for e in frontend.of("tool_call")] == [
        "list_calendar_events",
        "search_emails",
    ]


@pytest.mark.parametrize(
    ("summary", "is_usable"),
    [
        ("Two meetings, then the dentist at 17:45.", True),
        ("", False),
        ("## Unread mail\n1. Lunch on Friday? [unread]", False),  # the facts, sent back
        ("I went to the gym.\nI went to the gym.\nI went to the gym.", False),  # a loop
    ],
)
def test_a_summary_that_echoes_or_loops_is_not_shown(summary: str, is_usable: bool) -> None:
    sent = "## Unread mail\n1. Lunch on Friday? [unread]\n\nMy briefing, please."
    assert usable(summary, sent) is is_usable
