"""Slack: post a message (approval required); list channels, history, thread replies, users.

Lists are cursor-paginated: a result with has_more carries next_cursor for the next call.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from pydantic_ai import ModelRetry, RunContext, ToolReturn

from co_tui.config.settings import Settings
from co_tui.context.deps import CoDeps
from co_tui.policy.egress_session import source_labels
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.telemetry.tracing import traced_egress
from co_tui.tools.errors import (
    ToolFailure,
    call_with_retries,
    classify_slack_error,
    handle_tool_error,
    not_configured,
)
from co_tui.tools.tool_return import tool_return

T = TypeVar("T")

SERVICE = "Slack"
HOW_TO_CONFIGURE = (
    "create a Slack app with a bot token (scopes channels:read, channels:history, "
    "groups:read, groups:history, users:read, chat:write), then set SLACK_BOT_TOKEN or "
    "slack_bot_token in settings.json"
)
_CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{6,}$")
_TS = re.compile(r"^\d{9,11}\.\d{1,6}$")
MAX_LIMIT = 200
MAX_TEXT = 40_000
_NAME_LOOKUP_PAGES = 10


def _client(deps: CoDeps) -> Any:
    from slack_sdk import WebClient

    base_url = deps.slack.api_base_url.rstrip("/") + "/"
    return WebClient(token=deps.slack_bot_token, timeout=30, base_url=base_url)


async def _call(ctx: RunContext[CoDeps], fn: Callable[[Any], T]) -> T:
    """Run `fn(client)` in a worker thread with retries; ToolFailure when it fails."""
    deps = ctx.deps
    if not deps.slack_bot_token:
        not_configured(SERVICE, HOW_TO_CONFIGURE)
    return await call_with_retries(lambda: fn(_client(deps)), classify_slack_error, deps.retry)


async def _team_url(ctx: RunContext[CoDeps]) -> str:
    url = ctx.deps.slack_team_url
    if url is None:
        data = await _call(ctx, lambda c: c.auth_test().data)
        url = ctx.deps.slack_team_url = str(data.get("url") or "https://app.slack.com/")
    return url


def message_link(team_url: str, channel_id: str, ts: str, thread_ts: str | None = None) -> str:
    link = f"{team_url.rstrip('/')}/archives/{channel_id}/p{ts.replace('.', '')}"
    if thread_ts and thread_ts != ts:
        link += f"?thread_ts={thread_ts}&cid={channel_id}"
    return link


def _limit(value: int) -> int:
    if not 1 <= value <= MAX_LIMIT:
        raise ModelRetry(f"limit must be between 1 and {MAX_LIMIT}.")
    return value


def _ts_time(ts: str) -> str:
    try:
        return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (ValueError, OverflowError):
        return ts


async def _channel_id(ctx: RunContext[CoDeps], channel: str) -> str:
    """Accept an id or a #name; names are looked up in the channel list."""
    name = channel.strip().lstrip("#")
    if not name:
        raise ModelRetry("channel is empty: pass a channel id (C…) or #name.")
    if _CHANNEL_ID.match(name):
        return name

    def find(client: Any) -> str | None:
        cursor = None
        for _ in range(_NAME_LOOKUP_PAGES):
            page = client.conversations_list(
                limit=MAX_LIMIT,
                cursor=cursor,
                exclude_archived=True,
                types="public_channel,private_channel",
            ).data
            for ch in page.get("channels", []):
                if ch.get("name") == name:
                    return str(ch["id"])
            cursor = page.get("response_metadata", {}).get("next_cursor")
            if not cursor:
                return None
        return None

    found = await _call(ctx, find)
    if found is None:
        raise ModelRetry(f"No channel named #{name}: use list_slack_channels to find its id.")
    return found


def _format_message(team_url: str, channel_id: str, index: int, m: dict[str, Any]) -> str:
    who = m.get("user") or m.get("username") or m.get("bot_id") or "?"
    text = str(m.get("text", "")).strip() or "(no text)"
    lines = [f"{index}. [{_ts_time(str(m.get('ts', '')))}] {who}: {text}"]
    if m.get("reply_count"):
        lines.append(f"   thread: {m['reply_count']} replies (thread_ts={m.get('ts')})")
    lines.append(
        f"   {message_link(team_url, channel_id, str(m.get('ts', '')), m.get('thread_ts'))}"
    )
    return "\n".join(lines)


def _paged(data: dict[str, Any]) -> tuple[bool, str | None]:
    cursor = data.get("response_metadata", {}).get("next_cursor") or None
    return bool(cursor or data.get("has_more")), cursor


def _page_result(
    lines: list[str], count: int, has_more: bool, cursor: str | None, **meta: Any
) -> ToolReturn:
    if has_more and cursor:
        lines.append(f"More: call again with cursor={cursor!r}.")
    fields: dict[str, Any] = {"count": count, "has_more": has_more}
    if cursor:
        fields["next_cursor"] = cursor
    return tool_return(ToolDisplay("\n".join(lines)), **(fields | meta))


async def post_slack_message(
    ctx: RunContext[CoDeps], channel: str, text: str, thread_ts: str | None = None
) -> ToolReturn:
    """Post a message to a Slack channel (or reply in a thread).

    Args:
        channel: Channel id (C…) or #name.
        text: The message (Slack mrkdwn).
        thread_ts: Optional ts of a parent message, to reply in its thread.
    """
    if not text.strip():
        raise ModelRetry("text is empty: pass the message to post.")
    if len(text) > MAX_TEXT:
        raise ModelRetry(f"text is too long ({len(text)} characters; at most {MAX_TEXT}).")
    if thread_ts is not None and not _TS.match(thread_ts):
        raise ModelRetry("thread_ts must be a message ts like '1712345678.123456'.")
    try:
        channel_id = await _channel_id(ctx, channel)
        team_url = await _team_url(ctx)
        data = await _post(ctx, channel, channel_id, text, thread_ts)
    except ToolFailure as failure:
        return handle_tool_error(failure, SERVICE)
    posted_channel = str(data.get("channel") or channel_id)
    ts = str(data.get("ts", ""))
    link = message_link(team_url, posted_channel, ts, thread_ts)
    where = "thread reply" if thread_ts else "message"
    posted = ToolDisplay(f"Posted {where} to {channel} (ts {ts}): {link}")
    return tool_return(posted, channel=posted_channel, ts=ts)


async def _post(
    ctx: RunContext[CoDeps], channel: str, channel_id: str, text: str, thread_ts: str | None
) -> dict[str, Any]:
    """chat.postMessage, recorded as an egress span: the message leaves this machine."""
    payload = {"channel": channel_id, "text": text, "thread_ts": thread_ts}
    size = len(json.dumps(payload, ensure_ascii=False).encode())
    labels = functools.partial(source_labels, ctx)
    with traced_egress("post_slack_message", f"Slack {channel}", size, labels) as egress:
        try:
            return await _call(ctx, lambda c: c.chat_postMessage(**payload).data)
        except ToolFailure:
            egress.outcome("failed")
            raise


async def list_slack_channels(
    ctx: RunContext[CoDeps],
    limit: int = 20,
    types: str = "public_channel",
    cursor: str | None = None,
) -> ToolReturn:
    """List Slack channels with ids, member counts, topics and links.

    Args:
        limit: At most this many channels (1-200, default 20).
        types: Comma-separated: public_channel, private_channel, mpim, im.
        cursor: next_cursor from a previous call, for the next page.
    """
    limit = _limit(limit)
    allowed = {"public_channel", "private_channel", "mpim", "im"}
    kinds = [t.strip() for t in types.split(",") if t.strip()]
    if not kinds or set(kinds) - allowed:
        raise ModelRetry(f"types must be a comma-separated subset of {sorted(allowed)}.")
    try:
        team_url = await _team_url(ctx)
        data = await _call(
            ctx,
            lambda c: (
                c.conversations_list(
                    limit=limit, types=",".join(kinds), cursor=cursor, exclude_archived=True
                ).data
            ),
        )
    except ToolFailure as failure:
        return handle_tool_error(failure, SERVICE)
    channels = data.get("channels", [])
    has_more, next_cursor = _paged(data)
    if not channels:
        return tool_return(ToolDisplay("No channels."), count=0, has_more=False)
    lines = ["Slack channels:"]
    for i, ch in enumerate(channels, 1):
        topic = (ch.get("topic") or {}).get("value") or (ch.get("purpose") or {}).get("value")
        member = "" if ch.get("is_member", True) else " · bot not a member"
        members = f" · {ch['num_members']} members" if "num_members" in ch else ""
        lines.append(f"{i}. #{ch.get('name', '?')} ({ch.get('id')}){members}{member}")
        if topic:
            lines.append(f"   {topic}")
        lines.append(f"   {team_url.rstrip('/')}/archives/{ch.get('id')}")
    return _page_result(lines, len(channels), has_more, next_cursor)


async def get_slack_channel_history(
    ctx: RunContext[CoDeps], channel: str, limit: int = 15, cursor: str | None = None
) -> ToolReturn:
    """Recent messages of a channel, newest first, with links.

    Args:
        channel: Channel id (C…) or #name.
        limit: At most this many messages (1-200, default 15).
        cursor: next_cursor from a previous call, for older messages.
    """
    limit = _limit(limit)
    try:
        channel_id = await _channel_id(ctx, channel)
        team_url = await _team_url(ctx)
        data = await _call(
            ctx,
            lambda c: c.conversations_history(channel=channel_id, limit=limit, cursor=cursor).data,
        )
    except ToolFailure as failure:
        return handle_tool_error(failure, SERVICE)
    messages = data.get("messages", [])
    has_more, next_cursor = _paged(data)
    if not messages:
        return tool_return(ToolDisplay(f"No messages in {channel}."), count=0, has_more=False)
    lines = [f"Messages in {channel} (newest first):"]
    lines += [_format_message(team_url, channel_id, i, m) for i, m in enumerate(messages, 1)]
    return _page_result(lines, len(messages), has_more, next_cursor)


async def get_slack_thread_replies(
    ctx: RunContext[CoDeps],
    channel: str,
    thread_ts: str,
    limit: int = 20,
    cursor: str | None = None,
) -> ToolReturn:
    """The replies in a thread (the parent message first), with links.

    Args:
        channel: Channel id (C…) or #name.
        thread_ts: ts of the thread's parent message (from get_slack_channel_history).
        limit: At most this many messages (1-200, default 20).
        cursor: next_cursor from a previous call, for more replies.
    """
    limit = _limit(limit)
    if not _TS.match(thread_ts.strip()):
        raise ModelRetry("thread_ts must be a message ts like '1712345678.123456'.")
    try:
        channel_id = await _channel_id(ctx, channel)
        team_url = await _team_url(ctx)
        data = await _call(
            ctx,
            lambda c: (
                c.conversations_replies(
                    channel=channel_id, ts=thread_ts.strip(), limit=limit, cursor=cursor
                ).data
            ),
        )
    except ToolFailure as failure:
        return handle_tool_error(failure, SERVICE)
    messages = data.get("messages", [])
    has_more, next_cursor = _paged(data)
    lines = [f"Thread {thread_ts} in {channel}:"]
    lines += [_format_message(team_url, channel_id, i, m) for i, m in enumerate(messages, 1)]
    return _page_result(lines, len(messages), has_more, next_cursor)


async def list_slack_users(
    ctx: RunContext[CoDeps], limit: int = 30, cursor: str | None = None
) -> ToolReturn:
    """Active (not deleted, not bot) users of the workspace.

    Args:
        limit: At most this many users to fetch (1-200, default 30).
        cursor: next_cursor from a previous call, for the next page.
    """
    limit = _limit(limit)
    try:
        team_url = await _team_url(ctx)
        data = await _call(ctx, lambda c: c.users_list(limit=limit, cursor=cursor).data)
    except ToolFailure as failure:
        return handle_tool_error(failure, SERVICE)
    members = [
        u
        for u in data.get("members", [])
        if not u.get("deleted") and not u.get("is_bot") and u.get("id") != "USLACKBOT"
    ]
    has_more, next_cursor = _paged(data)
    lines = ["Slack users:"] if members else ["No active users on this page."]
    for i, u in enumerate(members, 1):
        profile = u.get("profile", {}) or {}
        real = profile.get("real_name") or u.get("real_name") or ""
        title = f" · {profile['title']}" if profile.get("title") else ""
        lines.append(f"{i}. @{u.get('name', '?')} — {real} ({u.get('id')}){title}")
        lines.append(f"   {team_url.rstrip('/')}/team/{u.get('id')}")
    return _page_result(lines, len(members), has_more, next_cursor)


def integration_state(settings: Settings) -> tuple[str, Literal["ok", "error", "off"]]:
    """For /status: inspects the token's shape only, never calls Slack."""
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else ""
    if not token:
        return "not configured (SLACK_BOT_TOKEN)", "off"
    if not token.startswith(("xoxb-", "xoxp-", "xoxe.")):
        return "failing: SLACK_BOT_TOKEN does not look like a Slack token (xoxb-…)", "error"
    return ("configured (bot token)" if token.startswith("xoxb-") else "configured"), "ok"


# Registered by build_agent (tools/catalog.py); whether a call asks: policy/tool_specs.py.
TOOLS: list[Any] = [
    post_slack_message,
    list_slack_channels,
    get_slack_channel_history,
    get_slack_thread_replies,
    list_slack_users,
]
