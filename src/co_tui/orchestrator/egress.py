"""The egress guard: where each tool result came from, and what an outbound call may carry out.

Pure functions over the message history, so a resumed or compacted session is judged by
what its history holds, nothing else:

- `context_sources(messages, table)`: every private or untrusted tool result (and summary)
  in the conversation so far, one `Source` each, with a label for the user and its text.
- `egress_review(tool_name, args, sources, table)`: for an outbound tool while such sources
  are in the conversation, why the call must be asked about, and which parts of its
  arguments appear in the sources' text (`highlights`). None: nothing to guard.

`ToolTable` is the session's tools by name, each a `ToolSpec` (tools/spec.py): its `Origin`
(kind, private, untrusted), how to label its results, and whether and where it sends data.
This module names no tool: `BUILTIN_TABLE` holds the built-in tools' specs
(tools/specs.py), and `ToolTable.with_specs` adds a connected MCP server's tools (their
specs, `mcp_tool_spec`: untrusted, "mcp:<server>"; outbound unless the server is local).
A tool the table does not know counts as untrusted: a result nobody vouched for is treated
like one from the internet.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote_plus

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.attachments import attached_blocks
from co_tui.history import SUMMARY_PREFIX
from co_tui.orchestrator.approvals import tool_args
from co_tui.orchestrator.frontend import ApprovalRequest
from co_tui.tools.spec import (
    NEUTRAL,
    UNKNOWN_TOOL,
    Origin,
    OriginKind,
    ToolSpec,
    one_line,
    result_field,
)
from co_tui.tools.specs import BUILTIN_SPECS

MIN_RUN = 8  # shortest part of an argument worth highlighting
MAX_VALUE_CHARS = 20_000  # of one argument value searched for overlaps
MAX_SOURCE_CHARS = 200_000  # of one source's text searched
MAX_TOTAL_CHARS = 1_000_000  # of all sources' text searched (the newest first)
MAX_HIGHLIGHTS = 50
_FIND_LIMIT = 256  # distinct 8-grams up to which a C-speed `in` per gram beats a scan
_VERIFY_BUDGET = 2_000  # substring checks spent splitting runs that are not contiguous

SUMMARY = Origin(OriginKind.SUMMARY, private=True, untrusted=False)
# A file or note the user attached with `@` (co_tui/attachments.py): private, like a read.
ATTACHED = {
    "file": Origin(OriginKind.FILE, private=True, untrusted=False),
    "note": Origin(OriginKind.NOTE, private=True, untrusted=False),
}


@dataclass(frozen=True)
class ToolTable:
    """The session's tools by name (their specs): the built-in ones, plus any MCP server's."""

    specs: Mapping[str, ToolSpec] = field(default_factory=lambda: BUILTIN_SPECS)

    def spec(self, tool_name: str) -> ToolSpec | None:
        return self.specs.get(tool_name)

    def origin(self, tool_name: str) -> Origin:
        spec = self.specs.get(tool_name)
        return spec.origin if spec is not None else UNKNOWN_TOOL

    @cached_property
    def origins(self) -> Mapping[str, Origin]:
        return MappingProxyType({name: spec.origin for name, spec in self.specs.items()})

    @cached_property
    def outbound(self) -> Mapping[str, str]:
        """Outbound tools: what they send data to."""
        return MappingProxyType(
            {n: s.outbound for n, s in self.specs.items() if s.outbound is not None}
        )

    def is_outbound(self, tool_name: str) -> bool:
        spec = self.specs.get(tool_name)
        return spec is not None and spec.outbound is not None

    def with_specs(self, specs: Iterable[ToolSpec]) -> ToolTable:
        return ToolTable(MappingProxyType({**self.specs, **{s.name: s for s in specs}}))


BUILTIN_TABLE = ToolTable()
# Every built-in tool (tests/security/test_egress_guard.py checks none is missing).
ORIGINS: Mapping[str, Origin] = BUILTIN_TABLE.origins
OUTBOUND: Mapping[str, str] = BUILTIN_TABLE.outbound


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


def _label(tool_name: str, args: Mapping[str, Any], content: Any, table: ToolTable) -> str:
    spec = table.spec(tool_name)
    return spec.result_label(args, content) if spec is not None else f"result of {tool_name}"


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
    private = _strings(result_field(content, "private_sources"))
    untrusted = _strings(result_field(content, "untrusted_sources"))
    if not (private or untrusted):
        return None
    origin = Origin(OriginKind.SUBAGENT, private=bool(private), untrusted=bool(untrusted))
    labels = list(dict.fromkeys(private + untrusted))
    shown = ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
    return origin, f"sub-agent report (it read {one_line(shown)})"


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
    return origin, _label(part.tool_name, args, part.content, table)


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
            elif isinstance(part, UserPromptPart) and isinstance(part.content, str):
                for block in attached_blocks(part.content):
                    label = f"attached {block.kind} {block.path}"
                    yield Source(label, ATTACHED[block.kind], "", block.text)


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
    spec = table.spec(tool_name)
    risky = tuple(s for s in sources if s.origin.is_source)
    if spec is None or spec.outbound is None or not risky:
        return None
    destination = spec.destination_of(args)
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
