"""Gmail and Calendar tools against the local Google server."""

from __future__ import annotations

from datetime import UTC, datetime
from email import message_from_bytes, policy

import pytest
from pydantic_ai import ModelRetry, RunContext

from co_tui.context.deps import CoDeps
from co_tui.tools.google_calendar import list_calendar_events, search_calendar_events
from co_tui.tools.google_gmail import draft_email, list_emails, search_emails
from tests.helpers import model_view
from tests.servers.google_fake import FakeGoogle

NOW = datetime(2026, 11, 3, 8, 0, tzinfo=UTC)


async def test_list_emails_shows_inbox_with_links(
    ctx: RunContext[CoDeps], google_server: FakeGoogle
) -> None:
    result = model_view(await list_emails(ctx, max_results=10))
    assert result["count"] == 3
    display = result["display"]
    assert "Lunch on Friday? [unread]" in display and "From: Alice <alice@example.com>" in display
    assert "https://mail.google.com/mail/u/0/#all/t1" in display
    assert "Re: plan" not in display  # SENT, not INBOX
    (listing,) = google_server.requests_to("/gmail/v1/users/me/messages", "GET")[:1]
    assert listing.q("labelIds") == "INBOX"


async def test_list_emails_reports_more(ctx: RunContext[CoDeps]) -> None:
    result = model_view(await list_emails(ctx, max_results=2))
    assert result["count"] == 2 and result["has_more"] is True


async def test_search_emails_uses_gmail_query(
    ctx: RunContext[CoDeps], google_server: FakeGoogle
) -> None:
    result = model_view(await search_emails(ctx, "from:alice"))
    assert result["count"] == 2
    assert google_server.requests_to("/gmail/v1/users/me/messages")[0].q("q") == "from:alice"
    empty = model_view(await search_emails(ctx, "from:nobody"))
    assert empty["count"] == 0 and "no messages" in empty["display"]


async def test_email_arguments_are_checked(ctx: RunContext[CoDeps]) -> None:
    with pytest.raises(ModelRetry):
        await search_emails(ctx, "  ")
    with pytest.raises(ModelRetry):
        await list_emails(ctx, max_results=500)
    with pytest.raises(ModelRetry, match="invalid email address"):
        await draft_email(ctx, "not-an-address", "Hi", "Body")


async def test_draft_email_sends_a_proper_mime_message(
    ctx: RunContext[CoDeps], google_server: FakeGoogle
) -> None:
    out = model_view(
        await draft_email(
            ctx,
            "Zoë Müller <zoe@example.com>, bob@example.com",
            "Café plans ☕",
            "Hello Zoë,\n\nSee you at the café.\n",
            cc="carol@example.com",
        )
    )
    assert isinstance(out, str)
    assert "https://mail.google.com/mail/u/0/#drafts?compose=m-r-1" in out
    (req,) = google_server.requests_to("/gmail/v1/users/me/drafts", "POST")
    assert req.headers["content-type"].startswith("application/json")  # no media upload
    msg = message_from_bytes(google_server.draft_mime(), policy=policy.default)
    assert msg["Subject"] == "Café plans ☕"
    assert [a.addr_spec for a in msg["To"].addresses] == ["zoe@example.com", "bob@example.com"]
    assert msg["To"].addresses[0].display_name == "Zoë Müller"
    assert msg["Cc"] == "carol@example.com"
    assert msg.get_content_type() == "text/plain"
    assert msg.get_content() == "Hello Zoë,\n\nSee you at the café.\n"


async def test_list_calendar_events_in_range_with_meet_links(
    ctx: RunContext[CoDeps], google_server: FakeGoogle
) -> None:
    ctx.deps.clock = lambda: NOW
    result = model_view(await list_calendar_events(ctx, days_ahead=1))
    assert result["count"] == 2  # the cancelled one is left out
    display = result["display"]
    assert "Standup" in display and "Meet: https://meet.google.com/abc-defg-hij" in display
    assert "Design review" in display and "Meet: https://meet.google.com/xyz-uvwx-rst" in display
    assert "Event: https://www.google.com/calendar/event?eid=e1" in display
    assert "Tue 2026-11-03 09:00–09:15" in display and "Where: Room 4" in display
    (req,) = google_server.requests_to("/calendar/v3/calendars/primary/events")
    assert req.q("timeMin") == "2026-11-03T08:00:00Z"
    assert req.q("timeMax") == "2026-11-04T08:00:00Z"
    assert req.q("singleEvents") == "true" and req.q("orderBy") == "startTime"


async def test_list_calendar_all_day_and_empty_range(ctx: RunContext[CoDeps]) -> None:
    ctx.deps.clock = lambda: NOW
    week = model_view(await list_calendar_events(ctx, days_ahead=8))
    assert "2026-11-10 (all day)  Holiday" in week["display"]
    ctx.deps.clock = lambda: datetime(2027, 6, 1, tzinfo=UTC)
    empty = model_view(await list_calendar_events(ctx, days_ahead=1))
    assert empty["count"] == 0 and "none" in empty["display"]


async def test_search_calendar_events(ctx: RunContext[CoDeps]) -> None:
    ctx.deps.clock = lambda: NOW
    result = model_view(await search_calendar_events(ctx, "design", days_back=30, days_ahead=30))
    assert result["count"] == 2
    assert "Design retro" in result["display"] and "Design review" in result["display"]


async def test_calendar_ranges_are_checked(ctx: RunContext[CoDeps]) -> None:
    with pytest.raises(ModelRetry):
        await list_calendar_events(ctx, days_ahead=-1)
    with pytest.raises(ModelRetry):
        await list_calendar_events(ctx, days_ahead=0, days_back=0)
    with pytest.raises(ModelRetry):
        await search_calendar_events(ctx, "x", days_back=400)
