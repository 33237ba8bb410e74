"""The tools inside real turns: run_turn, a scripted FunctionModel, a RecordingFrontend.

Side-effect tools wait for approval: a denied call never reaches the server; an approved
call sends exactly the approved arguments.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email import message_from_bytes, policy
from typing import Any

import pytest

from co_tui.context.deps import CoDeps
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle
from tests.servers.google_fake import FakeGoogle
from tests.servers.slack_fake import FakeSlack

DRAFT = {"to": "alice@example.com", "subject": "Lunch", "body": "Friday at noon?"}
POST = {"channel": "#general", "text": "Deploy finished ✅"}


async def turn(deps: CoDeps, call: Call, frontend: RecordingFrontend) -> Any:
    model = ScriptedModel([call], ["All done."])
    bundle = make_bundle(model.model)
    return await run_turn(bundle.agent, "do it", deps=deps, history=[], frontend=frontend)


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("search_drive", {"query": "plan"}, "https://docs.google.com/open?id=doc-1"),
        ("read_drive_file", {"file_id": "doc-1"}, "Plan for Q3"),
        ("list_emails", {}, "https://mail.google.com/mail/u/0/#all/t1"),
        ("search_emails", {"query": "from:bob"}, "Invoice 42"),
        ("list_calendar_events", {"days_ahead": 1}, "https://meet.google.com/abc-defg-hij"),
        ("search_calendar_events", {"query": "retro"}, "Design retro"),
        ("list_slack_channels", {}, "https://acme.slack.com/archives/C00000002"),
        ("get_slack_channel_history", {"channel": "C00000001"}, "who is on call?"),
        (
            "get_slack_thread_replies",
            {"channel": "C00000001", "thread_ts": "1762160430.000100"},
            "reply 1",
        ),
        ("list_slack_users", {}, "@alice"),
    ],
)
async def test_read_only_tool_result_reaches_the_frontend(
    deps: CoDeps, tool: str, args: dict[str, Any], expected: str
) -> None:
    deps.clock = lambda: datetime(2026, 11, 3, 8, 0, tzinfo=UTC)
    frontend = RecordingFrontend()
    result = await turn(deps, Call(tool, args, "c1"), frontend)
    assert result.ok and result.output == "All done."
    assert frontend.approval_requests == []
    (info,) = frontend.of("tool_result")
    assert info.tool_name == tool and info.status == "ok"
    assert expected in info.content
    if tool != "read_drive_file":  # a str result has no display field
        assert info.display is not None and expected in info.display


async def test_draft_email_denied_never_reaches_gmail(
    deps: CoDeps, google_server: FakeGoogle
) -> None:
    frontend = RecordingFrontend([ApprovalDecision.DENY])
    result = await turn(deps, Call("draft_email", DRAFT, "d1"), frontend)
    assert result.ok
    (request,) = frontend.approval_requests
    assert request.tool_name == "draft_email" and request.args == DRAFT
    assert google_server.received == [] and google_server.drafts == []
    (info,) = frontend.of("tool_result")
    assert info.status == "denied"


async def test_draft_email_approved_creates_exactly_that_draft(
    deps: CoDeps, google_server: FakeGoogle
) -> None:
    frontend = RecordingFrontend([ApprovalDecision.APPROVE])
    result = await turn(deps, Call("draft_email", DRAFT, "d1"), frontend)
    assert result.ok and result.approvals[0].decision == "approve"
    assert len(google_server.drafts) == 1
    msg = message_from_bytes(google_server.draft_mime(), policy=policy.default)
    assert (msg["To"], msg["Subject"], msg.get_content()) == (
        "alice@example.com",
        "Lunch",
        "Friday at noon?\n",
    )
    (info,) = frontend.of("tool_result")
    assert info.status == "ok" and "#drafts?compose=" in info.content


async def test_post_slack_message_denied_never_reaches_slack(
    deps: CoDeps, slack_server: FakeSlack
) -> None:
    frontend = RecordingFrontend([ApprovalDecision.DENY])
    result = await turn(deps, Call("post_slack_message", POST, "p1"), frontend)
    assert result.ok
    assert frontend.approval_requests[0].args == POST
    assert slack_server.received == [] and slack_server.posted == []


async def test_post_slack_message_approved_posts_exactly_that_text(
    deps: CoDeps, slack_server: FakeSlack
) -> None:
    frontend = RecordingFrontend([ApprovalDecision.APPROVE])
    result = await turn(deps, Call("post_slack_message", POST, "p1"), frontend)
    assert result.ok
    assert slack_server.posted == [{"channel": "C00000001", "text": "Deploy finished ✅"}]
    (info,) = frontend.of("tool_result")
    assert info.display is not None
    assert "https://acme.slack.com/archives/C00000001/p1762160400000200" in info.display
