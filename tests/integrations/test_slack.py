"""Slack tools against the local Slack server: pages, links, errors."""

from __future__ import annotations

import pytest
from pydantic_ai import ModelRetry, RunContext

from co_tui.context.deps import CoDeps
from co_tui.tools.slack import (
    get_slack_channel_history,
    get_slack_thread_replies,
    list_slack_channels,
    list_slack_users,
    post_slack_message,
)
from tests.helpers import model_view
from tests.integrations.conftest import RecordingSleep
from tests.servers.slack_fake import POSTED_TS, FakeSlack


async def test_list_channels_pages_with_cursor(
    ctx: RunContext[CoDeps], slack_server: FakeSlack
) -> None:
    first = model_view(await list_slack_channels(ctx, limit=2))
    assert first["count"] == 2 and first["has_more"] is True
    assert "#general (C00000001)" in first["display"] and "11 members" in first["display"]
    assert "https://acme.slack.com/archives/C00000001" in first["display"]
    seen = [first]
    while seen[-1]["has_more"]:
        seen.append(
            model_view(await list_slack_channels(ctx, limit=2, cursor=seen[-1]["next_cursor"]))
        )
    assert [r["count"] for r in seen] == [2, 2, 1]
    assert "bot not a member" in seen[-1]["display"]
    assert len(slack_server.calls("auth.test")) == 1  # the team URL is cached for the session
    sent = slack_server.calls("conversations.list")[0].params()
    assert sent["limit"] == "2" and sent["types"] == "public_channel"


async def test_channel_history_by_name_with_links_and_threads(
    ctx: RunContext[CoDeps], slack_server: FakeSlack
) -> None:
    result = model_view(await get_slack_channel_history(ctx, "#eng", limit=5))
    assert result["count"] == 5 and result["has_more"] is True and result["next_cursor"]
    display = result["display"]
    assert (
        "who is on call?" in display
        and "thread: 2 replies (thread_ts=1762160430.000100)" in display
    )
    assert "https://acme.slack.com/archives/C00000003/p1762160430000100" in display
    history = slack_server.calls("conversations.history")[0].params()
    assert history["channel"] == "C00000003"
    more = model_view(
        await get_slack_channel_history(ctx, "C00000003", limit=5, cursor=result["next_cursor"])
    )
    assert "message 25" in more["display"]


async def test_thread_replies(ctx: RunContext[CoDeps]) -> None:
    result = model_view(await get_slack_thread_replies(ctx, "C00000001", "1762160430.000100"))
    assert result["count"] == 3 and result["has_more"] is False
    assert "reply 2" in result["display"]
    assert "?thread_ts=1762160430.000100&cid=C00000001" in result["display"]


async def test_list_users_skips_deleted_and_bots(ctx: RunContext[CoDeps]) -> None:
    first = model_view(await list_slack_users(ctx, limit=3))
    assert first["has_more"] is True and first["count"] == 2  # one deleted on this page
    assert "@alice — Alice Example (U0000001) · Engineer" in first["display"]
    second = model_view(await list_slack_users(ctx, limit=3, cursor=first["next_cursor"]))
    assert "@carol" in second["display"] and "cobot" not in second["display"]
    assert second["has_more"] is False


async def test_post_message(ctx: RunContext[CoDeps], slack_server: FakeSlack) -> None:
    result = model_view(await post_slack_message(ctx, "#general", "Hello *team*"))
    assert result["channel"] == "C00000001" and result["ts"] == POSTED_TS
    assert "https://acme.slack.com/archives/C00000001/p1762160400000200" in result["display"]
    assert slack_server.posted == [{"channel": "C00000001", "text": "Hello *team*"}]


async def test_misuse_errors_become_model_retry(ctx: RunContext[CoDeps]) -> None:
    with pytest.raises(ModelRetry, match="channel_not_found"):
        await get_slack_channel_history(ctx, "C09999999")
    with pytest.raises(ModelRetry, match="not_in_channel"):
        await get_slack_channel_history(ctx, "#ops")
    with pytest.raises(ModelRetry, match="No channel named #nowhere"):
        await post_slack_message(ctx, "#nowhere", "hi")
    with pytest.raises(ModelRetry, match="thread_not_found"):
        await get_slack_thread_replies(ctx, "C00000001", "1111111111.000001")
    with pytest.raises(ModelRetry, match="invalid_cursor"):
        await list_slack_channels(ctx, cursor="%%%")
    with pytest.raises(ModelRetry, match="thread_ts"):
        await get_slack_thread_replies(ctx, "C00000001", "yesterday")


async def test_invalid_auth_is_terminal(ctx: RunContext[CoDeps], slack_server: FakeSlack) -> None:
    ctx.deps.slack_bot_token = "xoxb-wrong"
    result = model_view(await list_slack_users(ctx))
    assert result["error"] is True and "invalid_auth" in result["display"]
    assert "SLACK_BOT_TOKEN" in result["display"]
    assert len(slack_server.received) == 1  # not retried


async def test_missing_scope_is_terminal(ctx: RunContext[CoDeps], slack_server: FakeSlack) -> None:
    slack_server.fail(
        "/api/users.list", 200, {"ok": False, "error": "missing_scope", "needed": "users:read"}
    )
    result = model_view(await list_slack_users(ctx))
    assert result["error"] is True and "users:read" in result["display"]


async def test_ratelimited_retries_after_the_servers_delay(
    ctx: RunContext[CoDeps], slack_server: FakeSlack, sleeps: RecordingSleep
) -> None:
    slack_server.fail(
        "/api/conversations.list", 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "2"}
    )
    result = model_view(await list_slack_channels(ctx))
    assert result["count"] == 5
    assert sleeps.delays == [2.0]
    assert len(slack_server.calls("conversations.list")) == 2


async def test_server_errors_give_up_after_bounded_retries(
    ctx: RunContext[CoDeps], slack_server: FakeSlack, sleeps: RecordingSleep
) -> None:
    ctx.deps.slack_team_url = "https://acme.slack.com/"
    slack_server.fail("/api/users.list", 500, "Internal Server Error", times=5)
    result = model_view(await list_slack_users(ctx))
    assert result["error"] is True and result["retryable"] is True
    assert "gave up after 3 tries" in result["display"]
    assert len(slack_server.calls("users.list")) == 3
    assert len(sleeps.delays) == 2 and all(d <= 5 for d in sleeps.delays)


async def test_long_retry_after_is_reported_not_waited(
    ctx: RunContext[CoDeps], slack_server: FakeSlack, sleeps: RecordingSleep
) -> None:
    slack_server.fail(
        "/api/auth.test", 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "120"}
    )
    result = model_view(await list_slack_users(ctx))
    assert result["error"] is True and "120s" in result["display"]
    assert sleeps.delays == []


async def test_not_configured_says_how(ctx: RunContext[CoDeps], slack_server: FakeSlack) -> None:
    ctx.deps.slack_bot_token = None
    result = model_view(await list_slack_channels(ctx))
    assert result["error"] is True and result["not_configured"] is True
    assert "SLACK_BOT_TOKEN" in result["display"]
    assert slack_server.received == []
