"""The spec of every built-in tool (protocol/tool_spec.py), one section per tool module.

A new built-in tool gets its spec here, in the section of its module; build_agent registers
it with the spec's `requires_approval`, /tools lists it under its `source`, and the
orchestrator reads this table (policy/egress.py: results and outbound calls;
approvals.py: why a call asks, which argument names it) and needs no edit.
tests/security/test_egress_guard.py checks that every tool build_agent registers has a spec.
This module is data: it imports no tool, so the orchestrator can read it without importing
the tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from email.utils import getaddresses
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from co_tui.protocol.tool_spec import (
    NEUTRAL,
    Origin,
    OriginKind,
    ToolSpec,
    arg_text,
    one_line,
    result_field,
)

_NOTE = Origin(OriginKind.NOTE, private=True, untrusted=False)
_FILE = Origin(OriginKind.FILE, private=True, untrusted=False)
# Others write into these too (a shared file, an invitation): private and untrusted, as mail.
_DRIVE = Origin(OriginKind.DRIVE, private=True, untrusted=True)
_CALENDAR = Origin(OriginKind.CALENDAR, private=True, untrusted=True)
_MEMORY = Origin(OriginKind.MEMORY, private=True, untrusted=False)
_EMAIL = Origin(OriginKind.EMAIL, private=True, untrusted=True)
_SLACK = Origin(OriginKind.SLACK, private=True, untrusted=True)
_WEB = Origin(OriginKind.WEB, private=False, untrusted=True)
# A sub-agent's report counts as what the sub-agent read (policy/egress.py reads the
# sources agent/delegate.py lists in it).
_SUBAGENT = Origin(OriginKind.SUBAGENT, private=False, untrusted=False)


def _senders(content: Any) -> str:
    raw = result_field(content, "senders")
    if not isinstance(raw, list) or not raw:
        return "someone"
    addresses = list(dict.fromkeys(a or n for n, a in getaddresses([str(s) for s in raw])))
    shown = ", ".join(addresses[:3])
    return shown + (f" and {len(addresses) - 3} more" if len(addresses) > 3 else "")


def _drive_name(args: Mapping[str, Any], content: Any) -> str:
    if isinstance(content, str) and content.strip():
        return one_line(content.strip().split("\n", 1)[0])
    return arg_text(args, "file_id")


def host(url: Any) -> str:
    """The host name of `url` (the text itself, on one line, when it has none)."""
    try:
        return urlsplit(str(url).strip()).hostname or one_line(str(url))
    except ValueError:
        return one_line(str(url))


def _shell_reason(isolation_level: str) -> str:
    if isolation_level == "none":
        return "runs a command on this machine without a sandbox"
    return f"runs a command in the sandbox (isolation: {isolation_level})"


_SPECS = [
    # tools/shell.py
    ToolSpec(
        "run_shell_command",
        key_arg="cmd",
        requires_approval=True,
        origin=_FILE,
        label=lambda a, c: f"shell output of `{arg_text(a, 'cmd')}`",
        approval_reason=_shell_reason,
        local=True,
    ),
    # tools/google_gmail.py
    ToolSpec(
        "draft_email",
        key_arg="to",
        requires_approval=True,
        outbound="Gmail",
        destination=lambda a: f"a Gmail draft to {arg_text(a, 'to')}",
        approval_reason="creates a draft in your Gmail account",
    ),
    ToolSpec(
        "list_emails", origin=_EMAIL, label=lambda a, c: f"email from {_senders(c)}", local=True
    ),
    ToolSpec(
        "search_emails",
        origin=_EMAIL,
        label=lambda a, c: f"email from {_senders(c)}",
        key_arg="query",
        local=True,
    ),
    # tools/slack.py
    ToolSpec(
        "post_slack_message",
        key_arg="channel",
        requires_approval=True,
        outbound="Slack",
        destination=lambda a: f"Slack ({arg_text(a, 'channel')})",
        approval_reason="posts a message others will see in Slack",
    ),
    ToolSpec(
        "list_slack_channels",
        origin=_SLACK,
        label=lambda a, c: "the Slack channel list",
        local=True,
    ),
    ToolSpec(
        "get_slack_channel_history",
        key_arg="channel",
        origin=_SLACK,
        label=lambda a, c: f"Slack messages in {arg_text(a, 'channel')}",
        local=True,
    ),
    ToolSpec(
        "get_slack_thread_replies",
        key_arg="channel",
        origin=_SLACK,
        label=lambda a, c: f"Slack thread in {arg_text(a, 'channel')}",
        local=True,
    ),
    ToolSpec(
        "list_slack_users", origin=_SLACK, label=lambda a, c: "the Slack user list", local=True
    ),
    # tools/memory.py
    ToolSpec(
        "save_memory",
        key_arg="content",
        requires_approval=True,
        approval_reason="stores a memory that future sessions will see",
        local=True,
    ),
    ToolSpec(
        "recall_memory",
        key_arg="query",
        origin=_MEMORY,
        label=lambda a, c: f"memories about {arg_text(a, 'query')!r}",
        local=True,
    ),
    ToolSpec(
        "list_memories", origin=_MEMORY, label=lambda a, c: "the list of memories", local=True
    ),
    # tools/google_drive.py
    ToolSpec(
        "search_drive",
        key_arg="query",
        origin=_DRIVE,
        label=lambda a, c: f"Drive files matching {arg_text(a, 'query')!r}",
        local=True,
    ),
    ToolSpec(
        "read_drive_file",
        origin=_DRIVE,
        label=lambda a, c: f"Drive file {_drive_name(a, c)}",
        key_arg="file_id",
        local=True,
    ),
    # tools/google_calendar.py
    ToolSpec(
        "list_calendar_events", origin=_CALENDAR, label=lambda a, c: "calendar events", local=True
    ),
    ToolSpec(
        "search_calendar_events",
        key_arg="query",
        origin=_CALENDAR,
        label=lambda a, c: f"calendar events matching {arg_text(a, 'query')!r}",
        local=True,
    ),
    # tools/obsidian.py
    ToolSpec(
        "search_notes",
        key_arg="query",
        origin=_NOTE,
        label=lambda a, c: f"notes matching {arg_text(a, 'query')!r}",
        local=True,
    ),
    ToolSpec("list_notes", origin=_NOTE, label=lambda a, c: "the list of notes", local=True),
    ToolSpec(
        "read_note",
        origin=_NOTE,
        label=lambda a, c: f"note {arg_text(a, 'filename')}",
        key_arg="filename",
        local=True,
    ),
    # tools/reminders.py
    ToolSpec(
        "set_reminder",
        key_arg="text",
        requires_approval=True,
        approval_reason="schedules a reminder (a desktop notification at that moment)",
        local=True,
    ),
    # agent/delegate.py
    ToolSpec("delegate", origin=_SUBAGENT, key_arg="task", local=True),
    # tools/web.py: registered per web_policy; `web_tool_specs` sets requires_approval
    ToolSpec(
        "web_search",
        key_arg="query",
        source="web",
        origin=_WEB,
        label=lambda a, c: f"web search results for {arg_text(a, 'query')!r}",
        outbound="the web search provider",
        approval_reason="sends this query to the web search provider (web_policy.search is 'ask')",
    ),
    ToolSpec(
        "web_fetch",
        key_arg="url",
        source="web",
        origin=_WEB,
        label=lambda a, c: (
            f"web page {one_line(str(result_field(c, 'url') or arg_text(a, 'url')))}"
        ),
        outbound="the web",
        destination=lambda a: host(a.get("url", "")),
        approval_reason="fetches this address from the internet (web_policy.fetch is 'ask')",
    ),
    # skills/tool.py
    ToolSpec("load_skill", source="skills", origin=NEUTRAL, key_arg="name", local=True),
]

BUILTIN_SPECS: Mapping[str, ToolSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})
