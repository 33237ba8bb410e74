"""The morning briefing on the embedded model, over the fake Google servers: whatever the
small model's summary says, every event title reaches the user verbatim."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from co_tui.llm.local import server as local_server
from co_tui.protocol.recording import RecordingFrontend
from co_tui.session.jobs.briefing import NO_SUMMARY, run_briefing, usable
from tests.jobs.helpers import briefing_events, briefing_google, briefing_session, later_event
from tests.servers.google_fake import FakeGoogle

pytestmark = [pytest.mark.llm, pytest.mark.usefixtures("allow_model_requests")]


@pytest.fixture
def google() -> Iterator[FakeGoogle]:
    with briefing_google() as server:
        yield server


async def test_a_briefing_on_the_embedded_model_keeps_every_event_title_verbatim(
    tmp_path: Path, google: FakeGoogle, shared_server: local_server.Endpoint
) -> None:
    frontend = RecordingFrontend()
    session = briefing_session(tmp_path, google, frontend, sandbox_backend="subprocess")
    await session.start(None)
    try:
        bundle = session.built()[0]
        assert bundle.resolved is not None and bundle.resolved.provider == "local"
        result = await run_briefing(session, bundle.resolved.model)
    finally:
        await session.aclose()
    assert result.ok, result.error
    answer = result.output or ""
    first, summary, _ = answer.split("\n\n", 2)
    assert first.startswith("4 events in the next 24 hours; 1 unread mail;"), first
    # Whatever the small model wrote: a usable summary, or the notice, never an echo.
    assert summary == NO_SUMMARY or usable(summary, answer.split("\n\n", 2)[2]), summary
    for event in briefing_events():
        assert event["summary"] in answer, event["summary"]
    assert later_event()["summary"] not in answer
    assert "Lunch on Friday?" in answer
    assert frontend.approval_requests == []
