"""The egress guard: where each tool result came from, and what an outbound call may carry out.

Pure functions over the message history, so a resumed or compacted session is judged by
what its history holds, nothing else:

- `context_sources(messages, table)`: every private or untrusted tool result (and summary)
  in the conversation so far, one `Source` each, with a label for the user and its text.
- `egress_review(tool_name, args, sources, table)`: for an outbound tool while such sources
  are in the conversation, why the call must be asked about, and which parts of its
  arguments appear in the sources' text (`highlights`). None: nothing to guard.

`ToolTable` is the one table of tool name -> `Origin` (kind, private, untrusted) and of the
outbound tools and where they send; `BUILTIN_TABLE` covers the built-in tools, and
`ToolTable.with_mcp_server` adds a connected MCP server's tools (untrusted, "mcp:<server>";
outbound unless the server is marked local). A tool the table does not know counts as
untrusted: a result nobody vouched for is treated like one from the internet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from email.utils import getaddresses
from enum import StrEnum
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote_plus, urlsplit

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.history import SUMMARY_PREFIX
from co_tui.orchestrator.approvals import tool_args
from co_tui.orchestrator.frontend import ApprovalRequest

MIN_RUN = 8  # shortest part of an argument worth highlighting
MAX_VALUE_CHARS = 20_000  # of one argument value searched for overlaps
MAX_SOURCE_CHARS = 200_000  # of one source's text searched
MAX_TOTAL_CHARS = 1_000_000  # of all sources' text searched (the newest first)
MAX_HIGHLIGHTS = 50
MAX_LABEL_CHARS = 120
_FIND_LIMIT = 256  # distinct 8-grams up to which a C-speed `in` per gram beats a scan
_VERIFY_BUDGET = 2_000  # substring checks spent splitting runs that are not contiguous


class OriginKind(StrEnum):
    NOTE = "note"
    FILE = "file"  # shell output: the user's own files
    DRIVE = "drive"
    CALENDAR = "calendar"
    MEMORY = "memory"
    EMAIL = "email"
    SLACK = "slack"
    WEB = "web"
    MCP = "mcp"
    SUBAGENT = "sub-agent"
    SUMMARY = "summary"
    TOOL = "tool"  # a tool the table does not know
    NONE = "none"  # results that hold nothing the conversation did not already have


@dataclass(frozen=True)
class Origin:
    kind: OriginKind
    private: bool  # the user's own data: notes, files, mail, memories
    untrusted: bool  # written by someone else: web pages, other people's messages, MCP
    name: str = ""  # "mcp:<server>" for MCP tools

    @property
    def is_source(self) -> bool:
        return self.private or self.untrusted


NEUTRAL = Origin(OriginKind.NONE, private=False, untrusted=False)
UNKNOWN_TOOL = Origin(OriginKind.TOOL, private=False, untrusted=True)
SUMMARY = Origin(OriginKind.SUMMARY, private=True, untrusted=False)
_NOTE = Origin(OriginKind.NOTE, private=True, untrusted=False)
_FILE = Origin(OriginKind.FILE, private=True, untrusted=False)
_DRIVE = Origin(OriginKind.DRIVE, private=True, untrusted=False)
_CALENDAR = Origin(OriginKind.CALENDAR, private=True, untrusted=False)
_MEMORY = Origin(OriginKind.MEMORY, private=True, untrusted=False)
_EMAIL = Origin(OriginKind.EMAIL, private=True, untrusted=True)
_SLACK = Origin(OriginKind.SLACK, private=True, untrusted=True)
_WEB = Origin(OriginKind.WEB, private=False, untrusted=True)

# Every built-in tool (tests/security/test_egress_guard.py checks none is missing).
ORIGINS: Mapping[str, Origin] = MappingProxyType(
    {
        "read_note": _NOTE,
        "search_notes": _NOTE,
        "list_notes": _NOTE,
        "run_shell_command": _FILE,
        "search_drive": _DRIVE,
        "read_drive_file": _DRIVE,
        "list_calendar_events": _CALENDAR,
        "search_calendar_events": _CALENDAR,
        "recall_memory": _MEMORY,
        "list_memories": _MEMORY,
        "list_emails": _EMAIL,
        "search_emails": _EMAIL,
        "list_slack_channels": _SLACK,
        "get_slack_channel_history": _SLACK,
        "get_slack_thread_replies": _SLACK,
        "list_slack_users": _SLACK,
        "web_fetch": _WEB,
        "web_search": _WEB,
        # A sub-agent's report counts as what the sub-agent read (see _delegate_origin).
        "delegate": Origin(OriginKind.SUBAGENT, private=False, untrusted=False),
        "save_memory": NEUTRAL,
        "draft_email": NEUTRAL,
        "post_slack_message": NEUTRAL,
        "load_skill": NEUTRAL,
    }
)

# Outbound tools: what they send data to.
OUTBOUND: Mapping[str, str] = MappingProxyType(
    {
        "web_fetch": "the web",
        "web_search": "the web search provider",
        "post_slack_message": "Slack",
        "draft_email": "Gmail",
    }
)


@dataclass(frozen=True)
class ToolTable:
    origins: Mapping[str, Origin] = field(default_factory=lambda: ORIGINS)
    outbound: Mapping[str, str] = field(default_factory=lambda: OUTBOUND)

    def origin(self, tool_name: str) -> Origin:
        return self.origins.get(tool_name, UNKNOWN_TOOL)

    def is_outbound(self, tool_name: str) -> bool:
        return tool_name in self.outbound

    def with_mcp_server(self, server: str, tool_names: Iterable[str], *, local: bool) -> ToolTable:
        """The server's (prefixed) tools: untrusted results; outbound unless `local`."""
        origin = Origin(OriginKind.MCP, private=False, untrusted=True, name=f"mcp:{server}")
        names = list(tool_names)
        origins = {**self.origins, **dict.fromkeys(names, origin)}
        outbound = dict(self.outbound)
        if not local:
            outbound |= dict.fromkeys(names, f"the MCP server '{server}'")
        return ToolTable(MappingProxyType(origins), MappingProxyType(outbound))


BUILTIN_TABLE = ToolTable()


@dataclass(frozen=True)
class Source:
    """One private or untrusted result in the conversation."""

    label: str  # "note Projects/plan.md", "email from alice@example.com", "web page https://…"
    origin: Origin
    tool_call_id: str
    text: str = field(repr=False)  # what the model read, for the overlap search


@dataclass(frozen=True)
class EgressReview:
    """Why an outbound call waits for the user, and what in it came from the sources."""

    tool_name: str
    destination: str  # "example.com", "Slack (#general)", "the MCP server 'docs'"
    sources: tuple[Source, ...]
    labels: tuple[str, ...]  # distinct source labels, in the order they entered
    highlights: tuple[str, ...]  # parts of the arguments found in the sources' text
    reason: str  # for the dialog and the decision line

    def request(self, request: ApprovalRequest) -> ApprovalRequest:
        """`request` with this review's reason, sources and highlights."""
        return replace(request, reason=self.reason, sources=self.labels, highlights=self.highlights)


# -- sources --------------------------------------------------------------------------


def _clean(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _arg(args: Mapping[str, Any], name: str, default: str = "?") -> str:
    value = args.get(name)
    return _clean(str(value)) if value not in (None, "") else default


def _field(content: Any, name: str) -> Any:
    return content.get(name) if isinstance(content, dict) else None


def _senders(content: Any) -> str:
    raw = _field(content, "senders")
    if not isinstance(raw, list) or not raw:
        return "someone"
    addresses = list(dict.fromkeys(a or n for n, a in getaddresses([str(s) for s in raw])))
    shown = ", ".join(addresses[:3])
    return shown + (f" and {len(addresses) - 3} more" if len(addresses) > 3 else "")


def _drive_name(args: Mapping[str, Any], content: Any) -> str:
    if isinstance(content, str) and content.strip():
        return _clean(content.strip().split("\n", 1)[0])
    return _arg(args, "file_id")


Labeller = Callable[[Mapping[str, Any], Any], str]

_LABELS: Mapping[str, Labeller] = MappingProxyType(
    {
        "read_note": lambda a, c: f"note {_arg(a, 'filename')}",
        "search_notes": lambda a, c: f"notes matching {_arg(a, 'query')!r}",
        "list_notes": lambda a, c: "the list of notes",
        "run_shell_command": lambda a, c: f"shell output of `{_arg(a, 'cmd')}`",
        "search_drive": lambda a, c: f"Drive files matching {_arg(a, 'query')!r}",
        "read_drive_file": lambda a, c: f"Drive file {_drive_name(a, c)}",
        "list_calendar_events": lambda a, c: "calendar events",
        "search_calendar_events": lambda a, c: f"calendar events matching {_arg(a, 'query')!r}",
        "recall_memory": lambda a, c: f"memories about {_arg(a, 'query')!r}",
        "list_memories": lambda a, c: "the list of memories",
        "list_emails": lambda a, c: f"email from {_senders(c)}",
        "search_emails": lambda a, c: f"email from {_senders(c)}",
        "list_slack_channels": lambda a, c: "the Slack channel list",
        "get_slack_channel_history": lambda a, c: f"Slack messages in {_arg(a, 'channel')}",
        "get_slack_thread_replies": lambda a, c: f"Slack thread in {_arg(a, 'channel')}",
        "list_slack_users": lambda a, c: "the Slack user list",
        "web_fetch": lambda a, c: f"web page {_clean(str(_field(c, 'url') or _arg(a, 'url')))}",
        "web_search": lambda a, c: f"web search results for {_arg(a, 'query')!r}",
    }
)


def _label(tool_name: str, origin: Origin, args: Mapping[str, Any], content: Any) -> str:
    labeller = _LABELS.get(tool_name)
    if labeller is not None:
        return labeller(args, content)
    if origin.kind is OriginKind.MCP:
        return f"{origin.name} {tool_name}"
    return f"result of {tool_name}"


def _leaves(value: Any, out: list[str], depth: int = 0) -> None:
    if isinstance(value, str):
        out.append(value)
    elif depth < 8 and isinstance(value, dict):
        for item in value.values():
            _leaves(item, out, depth + 1)
    elif depth < 8 and isinstance(value, list | tuple):
        for item in value:
            _leaves(item, out, depth + 1)


def content_text(content: Any) -> str:
    """A result's strings, one per line (dict keys and numbers left out)."""
    parts: list[str] = []
    _leaves(content, parts)
    return "\n".join(parts)


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _delegate_origin(content: Any) -> tuple[Origin, str] | None:
    """A sub-agent's report is private/untrusted when what it read was (tools/delegate.py
    lists those sources in the report)."""
    private = _strings(_field(content, "private_sources"))
    untrusted = _strings(_field(content, "untrusted_sources"))
    if not (private or untrusted):
        return None
    origin = Origin(OriginKind.SUBAGENT, private=bool(private), untrusted=bool(untrusted))
    labels = list(dict.fromkeys(private + untrusted))
    shown = ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
    return origin, f"sub-agent report (it read {_clean(shown)})"


_READ_OUTCOMES = ("success", "failed")  # the others carry our own message, not a result


def _is_empty_or_error(content: Any) -> bool:
    return isinstance(content, dict) and (content.get("error") is True or content.get("count") == 0)


def origin_and_label(
    part: ToolReturnPart, args: Mapping[str, Any], table: ToolTable = BUILTIN_TABLE
) -> tuple[Origin, str]:
    """Where a tool result comes from, and its label ("note a.md", "web page https://…")."""
    origin = table.origin(part.tool_name)
    if origin.kind is OriginKind.SUBAGENT:
        return _delegate_origin(part.content) or (NEUTRAL, "")
    if not origin.is_source:
        return origin, ""
    return origin, _label(part.tool_name, origin, args, part.content)


def source_of(part: ToolReturnPart, args: Mapping[str, Any], table: ToolTable) -> Source | None:
    """The source a tool result is, or None when it holds nothing private or untrusted
    (also: a denied, interrupted or retried call, an error result, an empty listing). A
    failed call counts: a failed shell command still returns its output."""
    if part.outcome not in _READ_OUTCOMES or _is_empty_or_error(part.content):
        return None
    origin, label = origin_and_label(part, args, table)
    if not origin.is_source:
        return None
    return Source(label, origin, part.tool_call_id, content_text(part.content))


def _is_summary(part: Any) -> bool:
    return (
        isinstance(part, UserPromptPart)
        and isinstance(part.content, str)
        and part.content.startswith(SUMMARY_PREFIX)
    )


def iter_sources(
    messages: Sequence[ModelMessage], table: ToolTable = BUILTIN_TABLE
) -> Iterator[Source]:
    """Every private or untrusted result in `messages`, in order, one at a time. A summary of
    earlier turns counts as private: it may hold anything those turns read."""
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        if isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    calls[part.tool_call_id] = tool_args(part)
            continue
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                source = source_of(part, calls.get(part.tool_call_id, {}), table)
                if source is not None:
                    yield source
            elif _is_summary(part):
                text = str(part.content)
                yield Source("summary of the earlier conversation", SUMMARY, "", text)


def context_sources(
    messages: Sequence[ModelMessage], table: ToolTable = BUILTIN_TABLE
) -> list[Source]:
    """Every private or untrusted result (and summary) in `messages`, in order."""
    return list(iter_sources(messages, table))


def has_sources(messages: Sequence[ModelMessage], table: ToolTable = BUILTIN_TABLE) -> bool:
    """Whether any private or untrusted result is in `messages` (stops at the first)."""
    return next(iter_sources(messages, table), None) is not None


# -- highlights -------------------------------------------------------------------------


def _gram_hits(value: str, text: str, k: int) -> list[int]:
    """Sorted positions i where value[i:i+k] occurs in text."""
    positions: dict[str, list[int]] = {}
    for i in range(len(value) - k + 1):
        positions.setdefault(value[i : i + k], []).append(i)
    hits: list[int] = []
    if len(positions) <= _FIND_LIMIT:
        for gram, where in positions.items():
            if gram in text:
                hits.extend(where)
    else:  # many grams: one pass over the text beats a search per gram
        for j in range(len(text) - k + 1):
            where = positions.pop(text[j : j + k], None)
            if where is not None:
                hits.extend(where)
                if not positions:
                    break
    return sorted(hits)


def _segments(hits: list[int], k: int) -> Iterator[tuple[int, int]]:
    """Runs of consecutive hit positions as (start, end) spans of the value."""
    start = prev = None
    for i in hits:
        if start is None or prev is None or i != prev + 1:
            if start is not None and prev is not None:
                yield start, prev + k
            start = i
        prev = i
    if start is not None and prev is not None:
        yield start, prev + k


def _maximal_runs(
    value: str, text: str, start: int, end: int, k: int, budget: list[int]
) -> list[str]:
    """The maximal runs inside value[start:end] (every k-gram of which is in `text`)."""
    whole = value[start:end]
    if whole in text:
        return [whole]
    runs: list[str] = []
    last_end = start
    for s in range(start, end - k + 1):
        if budget[0] <= 0:  # out of checks: the rest as one approximate run
            if end > last_end:
                runs.append(value[max(s, last_end - k + 1) : end])
            break
        lo, hi = s + k, end  # value[s:lo] is in text; find the longest
        while lo < hi:
            mid = (lo + hi + 1) // 2
            budget[0] -= 1
            if value[s:mid] in text:
                lo = mid
            else:
                hi = mid - 1
        if lo > last_end:
            runs.append(value[s:lo])
            last_end = lo
        if lo == end:
            break
    return runs


def overlaps(value: str, text: str, min_run: int = MIN_RUN) -> list[str]:
    """Every maximal run of at least `min_run` characters of `value` that occurs in `text`."""
    if len(value) < min_run or len(text) < min_run:
        return []
    budget = [_VERIFY_BUDGET]
    runs: list[str] = []
    for start, end in _segments(_gram_hits(value, text, min_run), min_run):
        runs.extend(_maximal_runs(value, text, start, end, min_run, budget))
    return runs


def _argument_strings(value: Any) -> Iterator[str]:
    strings: list[str] = []
    _leaves(value, strings)
    for text in strings:
        text = text[:MAX_VALUE_CHARS]
        yield text
        if "%" in text or "+" in text:
            decoded = unquote_plus(text)
            if decoded != text:
                yield decoded  # a URL or query carries text percent-encoded


def _searched_texts(sources: Sequence[Source]) -> list[str]:
    texts: list[str] = []
    total = 0
    for source in reversed(sources):  # the newest first
        text = source.text[:MAX_SOURCE_CHARS]
        if total + len(text) > MAX_TOTAL_CHARS:
            text = text[: MAX_TOTAL_CHARS - total]
        if len(text) >= MIN_RUN:
            texts.append(text)
            total += len(text)
        if total >= MAX_TOTAL_CHARS:
            break
    return texts


def find_highlights(args: Mapping[str, Any], sources: Sequence[Source]) -> tuple[str, ...]:
    """The parts of the argument values (percent-decoded too) found in the sources' text:
    maximal runs of at least MIN_RUN characters, the longest first, none inside another."""
    texts = _searched_texts(sources)
    found: set[str] = set()
    for value in _argument_strings(dict(args)):
        for text in texts:
            found.update(overlaps(value, text))
    kept: list[str] = []
    for run in sorted(found, key=lambda r: (-len(r), r)):
        if not any(run in longer for longer in kept):
            kept.append(run)
        if len(kept) >= MAX_HIGHLIGHTS:
            break
    return tuple(kept)


# -- the review -------------------------------------------------------------------------


def _host(url: Any) -> str:
    try:
        return urlsplit(str(url).strip()).hostname or _clean(str(url))
    except ValueError:
        return _clean(str(url))


def _destination(tool_name: str, args: Mapping[str, Any], service: str) -> str:
    if tool_name == "web_fetch":
        return _host(args.get("url", ""))
    if tool_name == "post_slack_message":
        return f"Slack ({_arg(args, 'channel')})"
    if tool_name == "draft_email":
        return f"a Gmail draft to {_arg(args, 'to')}"
    return service


def _what(sources: Sequence[Source]) -> str:
    private = any(s.origin.private for s in sources)
    untrusted = any(s.origin.untrusted for s in sources)
    if private and untrusted:
        kind = "private and untrusted"
    else:
        kind = "private" if private else "untrusted"
    count = len({s.label for s in sources})
    return f"{kind} content ({count} source{'s' if count != 1 else ''})"


def egress_review(
    tool_name: str,
    args: Mapping[str, Any],
    sources: Sequence[Source],
    table: ToolTable = BUILTIN_TABLE,
) -> EgressReview | None:
    """The review of an outbound call while private or untrusted content is in the
    conversation; None when the tool sends nothing out or there is no such content."""
    service = table.outbound.get(tool_name)
    risky = tuple(s for s in sources if s.origin.is_source)
    if service is None or not risky:
        return None
    destination = _destination(tool_name, args, service)
    labels = tuple(dict.fromkeys(s.label for s in risky))
    highlights = find_highlights(args, risky)
    reason = (
        f"egress guard: this sends data to {destination} while the conversation holds "
        f"{_what(risky)}; check that nothing leaves that should not"
    )
    if len(highlights) == 1:
        reason += " (1 part of it appears in that content)"
    elif highlights:
        reason += f" ({len(highlights)} parts of it appear in that content)"
    return EgressReview(tool_name, destination, risky, labels, highlights, reason)
