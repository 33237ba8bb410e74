"""Gmail: list and search messages (read-only), and create drafts (approval required).

Drafts are created with a base64url `raw` MIME message in the JSON body, not a media upload:
media uploads go to a fixed https upload URL that ignores the configured API endpoint.
"""

from __future__ import annotations

import base64
import functools
import re
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import getaddresses
from typing import Any

from pydantic_ai import ModelRetry, RunContext, ToolReturn

from co_tui.context.deps import CoDeps
from co_tui.policy.egress_session import source_labels
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.telemetry.tracing import traced_egress
from co_tui.tools.errors import ToolFailure, handle_tool_error
from co_tui.tools.google_api import google_call
from co_tui.tools.tool_return import tool_return

SERVICE = "Gmail"
MAX_RESULTS = 50
_HEADERS = ["From", "To", "Subject", "Date"]
_ADDRESS = re.compile(r"^[^@\s<>,;]+@[^@\s<>,;]+\.[^@\s<>,;]+$")


def gmail_link(thread_id: str) -> str:
    return f"https://mail.google.com/mail/u/0/#all/{thread_id}"


def _sender(msg: dict[str, Any]) -> str:
    for header in msg.get("payload", {}).get("headers", []):
        if header.get("name", "").lower() == "from":
            return str(header.get("value", ""))
    return ""


def _format_message(index: int, msg: dict[str, Any]) -> str:
    headers = {
        h.get("name", "").lower(): h.get("value", "")
        for h in msg.get("payload", {}).get("headers", [])
    }
    unread = " [unread]" if "UNREAD" in msg.get("labelIds", []) else ""
    lines = [
        f"{index}. {headers.get('subject') or '(no subject)'}{unread}",
        f"   From: {headers.get('from', '?')}",
        f"   Date: {headers.get('date', '?')}",
    ]
    if msg.get("snippet"):
        lines.append(f"   {msg['snippet']}")
    lines.append(f"   {gmail_link(msg.get('threadId') or msg.get('id', ''))}")
    return "\n".join(lines)


async def _messages(
    ctx: RunContext[CoDeps], query: str | None, max_results: int, title: str
) -> ToolReturn:
    if not 1 <= max_results <= MAX_RESULTS:
        raise ModelRetry(f"max_results must be between 1 and {MAX_RESULTS}.")

    def request(service: Any) -> tuple[list[dict[str, Any]], bool]:
        users = service.users()
        params: dict[str, Any] = {"userId": "me", "maxResults": max_results}
        if query:
            params["q"] = query
        else:
            params["labelIds"] = ["INBOX"]
        listing = users.messages().list(**params).execute()
        messages = [
            users.messages()
            .get(userId="me", id=m["id"], format="metadata", metadataHeaders=_HEADERS)
            .execute()
            for m in listing.get("messages", [])
        ]
        return messages, bool(listing.get("nextPageToken"))

    try:
        messages, has_more = await google_call(ctx, SERVICE, "gmail", "v1", request)
    except ToolFailure as failure:
        return handle_tool_error(failure, SERVICE)
    if not messages:
        return tool_return(ToolDisplay(f"{title}: no messages."), count=0, has_more=False)
    lines = [f"{title}:"] + [_format_message(i, m) for i, m in enumerate(messages, start=1)]
    if has_more:
        lines.append("More messages exist: narrow the search or raise max_results.")
    # Who wrote them: the egress guard names this result "email from …".
    senders = list(dict.fromkeys(s for s in map(_sender, messages) if s))
    display = ToolDisplay("\n".join(lines))
    return tool_return(display, count=len(messages), has_more=has_more, senders=senders)


async def list_emails(ctx: RunContext[CoDeps], max_results: int = 10) -> ToolReturn:
    """List the newest emails in the inbox, with links to open them in Gmail.

    Args:
        max_results: How many messages (1-50, default 10).
    """
    return await _messages(ctx, None, max_results, "Newest inbox messages")


async def search_emails(ctx: RunContext[CoDeps], query: str, max_results: int = 10) -> ToolReturn:
    """Search emails with Gmail search syntax, with links to open them in Gmail.

    Args:
        query: Gmail search, e.g. "from:alice newer_than:7d" or "subject:invoice is:unread".
        max_results: How many messages (1-50, default 10).
    """
    if not query.strip():
        raise ModelRetry("The query is empty: pass a Gmail search such as 'from:alice'.")
    return await _messages(ctx, query, max_results, f"Messages matching {query!r}")


def _addresses(value: str, field: str) -> list[Address]:
    parsed = getaddresses([value])
    result: list[Address] = []
    for name, addr in parsed:
        if not _ADDRESS.match(addr):
            raise ModelRetry(f"{field} has an invalid email address {addr or value!r}.")
        result.append(Address(display_name=name, addr_spec=addr))
    if not result:
        raise ModelRetry(f"{field} is empty: pass at least one email address.")
    return result


def build_mime(to: str, subject: str, body: str, cc: str | None = None) -> EmailMessage:
    """A text/plain UTF-8 message; headers are encoded by the email package, not by hand."""
    if any(c in subject for c in "\r\n"):
        raise ModelRetry("subject must be one line.")
    msg = EmailMessage()
    msg["To"] = _addresses(to, "to")
    if cc:
        msg["Cc"] = _addresses(cc, "cc")
    msg["Subject"] = subject
    msg.set_content(body)
    return msg


async def draft_email(
    ctx: RunContext[CoDeps], to: str, subject: str, body: str, cc: str | None = None
) -> ToolReturn:
    """Create a Gmail draft (not sent). The user reviews and sends it from Gmail.

    Args:
        to: Recipient address(es), comma-separated, e.g. "Alice <alice@example.com>".
        subject: The subject line.
        body: The plain-text message body.
        cc: Optional Cc address(es), comma-separated.
    """
    msg = build_mime(to, subject, body, cc)
    raw = base64.urlsafe_b64encode(msg.as_bytes()).decode("ascii")

    def request(service: Any) -> dict[str, Any]:
        drafts = service.users().drafts()
        return drafts.create(userId="me", body={"message": {"raw": raw}}).execute()

    labels = functools.partial(source_labels, ctx)
    with traced_egress("draft_email", f"Gmail draft to {to}", len(raw), labels) as egress:
        try:
            draft = await google_call(ctx, SERVICE, "gmail", "v1", request)
        except ToolFailure as failure:
            egress.outcome("failed")
            return handle_tool_error(failure, SERVICE)
    message_id = draft.get("message", {}).get("id", "")
    link = f"https://mail.google.com/mail/u/0/#drafts?compose={message_id}"
    draft_id = draft.get("id")
    return ToolReturn(
        return_value=f"Draft created for {to}: {subject!r} (draft id {draft_id}). Open it: {link}"
    )


# Registered by build_agent (tools/catalog.py); whether a call asks: policy/tool_specs.py.
TOOLS: list[Any] = [draft_email, list_emails, search_emails]
