"""Span queries shared by the live viewer and the traces page. Read-only; never load more
rows than asked: the list views read a few JSON fields, not whole attribute blobs."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from co_tui.telemetry.tracing import EGRESS_SPAN_PREFIX

_MODEL = """coalesce(json_extract(attributes, '$."gen_ai.request.model"'),
    json_extract(attributes, '$."gen_ai.response.model"'))"""
_TOKENS = """coalesce(json_extract(attributes, '$."gen_ai.usage.input_tokens"'),
    json_extract(attributes, '$."gen_ai.aggregated_usage.input_tokens"'), 0)
  + coalesce(json_extract(attributes, '$."gen_ai.usage.output_tokens"'),
    json_extract(attributes, '$."gen_ai.aggregated_usage.output_tokens"'), 0)"""
SUMMARY_COLUMNS = f"""rowid, id, trace_id, parent_id, name, start_time, end_time, duration_ms,
    status_code, {_MODEL} AS model, {_TOKENS} AS tokens"""
STATUSES = ("ok", "error", "unset")


@dataclass(frozen=True)
class SpanSummary:
    """One row of the live table."""

    rowid: int
    id: str
    trace_id: str
    parent_id: str | None
    name: str
    start_time: int
    end_time: int | None
    duration_ms: float | None
    status_code: str
    model: str | None
    tokens: int


@dataclass
class SpanDetail:
    """A whole span, for the tree and the details pane."""

    id: str
    trace_id: str
    parent_id: str | None
    name: str
    kind: str | None
    start_time: int
    end_time: int | None
    duration_ms: float | None
    status_code: str
    status_description: str | None
    attributes: dict[str, Any]
    events: list[dict[str, Any]]
    resource: dict[str, Any]
    children: list[SpanDetail] = field(default_factory=list)


@dataclass(frozen=True)
class SpanFilter:
    """`status:error model words`: a status (ok, error, unset) and words the name contains."""

    words: tuple[str, ...] = ()
    status: str | None = None

    @classmethod
    def parse(cls, text: str) -> SpanFilter:
        words: list[str] = []
        status: str | None = None
        for token in text.split():
            key, sep, value = token.partition(":")
            if sep and key.lower() == "status" and value.lower() in STATUSES:
                status = value.upper()
            elif not sep and token.lower() in STATUSES:
                status = token.upper()  # a bare "error" means the status
            else:
                words.append(token)
        return cls(tuple(words), status)

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for word in self.words:
            clauses.append("name LIKE ? ESCAPE '\\'")
            escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params.append(f"%{escaped}%")
        if self.status:
            clauses.append("status_code = ?")
            params.append(self.status)
        return " AND ".join(clauses), params


def _summary(row: sqlite3.Row | tuple[Any, ...]) -> SpanSummary:
    return SpanSummary(
        int(row[0]), row[1], row[2], row[3], row[4], int(row[5]), row[6], row[7],
        row[8] or "UNSET", row[9], int(row[10] or 0),
    )  # fmt: skip


def recent_spans(
    conn: sqlite3.Connection, limit: int = 200, span_filter: SpanFilter | None = None
) -> list[SpanSummary]:
    """The newest `limit` spans by start time (uses idx_spans_start_time)."""
    where, params = (span_filter or SpanFilter()).where()
    sql = f"SELECT {SUMMARY_COLUMNS} FROM spans {'WHERE ' + where if where else ''} "
    sql += "ORDER BY start_time DESC LIMIT ?"
    return [_summary(r) for r in conn.execute(sql, [*params, limit])]


def spans_after(
    conn: sqlite3.Connection,
    rowid: int,
    limit: int = 1000,
    span_filter: SpanFilter | None = None,
    upto: int | None = None,
) -> list[SpanSummary]:
    """Spans written after `rowid` (and up to `upto`): the live viewer's poll."""
    where, params = (span_filter or SpanFilter()).where()
    sql = f"SELECT {SUMMARY_COLUMNS} FROM spans WHERE rowid > ? AND rowid <= ?"
    sql += f" {'AND ' + where if where else ''} ORDER BY rowid LIMIT ?"
    top = upto if upto is not None else 2**63 - 1
    return [_summary(r) for r in conn.execute(sql, [rowid, top, *params, limit])]


def max_rowid(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(rowid), 0) FROM spans").fetchone()[0])


def resolve_trace_id(conn: sqlite3.Connection, prefix: str) -> list[str]:
    """Trace ids starting with `prefix` (at most two: more than one means ambiguous)."""
    escaped = prefix.lower().replace("%", "").replace("_", "")
    rows = conn.execute(
        "SELECT DISTINCT trace_id FROM spans WHERE trace_id >= ? AND trace_id < ? LIMIT 2",
        (escaped, escaped + "g"),  # a range on hex ids: the trace_id index answers it
    )
    return [r[0] for r in rows]


def newest_trace_id(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT trace_id FROM spans ORDER BY start_time DESC LIMIT 1").fetchone()
    return row[0] if row else None


def _loads(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def trace_spans(conn: sqlite3.Connection, trace_id: str) -> list[SpanDetail]:
    """Every span of one trace, by start time (uses idx_spans_trace_id)."""
    rows = conn.execute(
        "SELECT id, trace_id, parent_id, name, kind, start_time, end_time, duration_ms, "
        "status_code, status_description, attributes, events, resource "
        "FROM spans WHERE trace_id = ? ORDER BY start_time",
        (trace_id,),
    )
    return [_detail(r) for r in rows]


def _detail(r: sqlite3.Row | tuple[Any, ...]) -> SpanDetail:
    return SpanDetail(
        r[0], r[1], r[2], r[3], r[4], int(r[5]), r[6], r[7], r[8] or "UNSET", r[9],
        _loads(r[10], {}), _loads(r[11], []), _loads(r[12], {}),
    )  # fmt: skip


def expand_json(value: Any, max_chars: int = 20_000) -> Any:
    """For display: JSON held in a string attribute (messages, tool arguments) as structure;
    very long strings cut."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            pass
    if isinstance(value, str) and len(value) > max_chars:
        return value[:max_chars] + f"… ({len(value) - max_chars:,} more characters)"
    return value


def build_tree(spans: list[SpanDetail]) -> list[SpanDetail]:
    """Link children to parents; the roots (a parent not in the trace counts as none)."""
    by_id = {s.id: s for s in spans}
    roots: list[SpanDetail] = []
    for span in spans:
        span.children = []
    for span in spans:
        parent = by_id.get(span.parent_id) if span.parent_id else None
        (parent.children if parent is not None else roots).append(span)
    return roots


def walk(roots: list[SpanDetail], depth: int = 0) -> list[tuple[int, SpanDetail]]:
    """Depth-first (depth, span) pairs: the order a tree shows them."""
    out: list[tuple[int, SpanDetail]] = []
    for span in roots:
        out.append((depth, span))
        out.extend(walk(span.children, depth + 1))
    return out


# -- what left this machine --------------------------------------------------------------

EGRESS_PREFIX = EGRESS_SPAN_PREFIX  # "egress <tool>": the spans traced_egress opens
_EGRESS_COLUMNS = """id, trace_id, start_time,
    json_extract(attributes, '$."co.egress.tool"'),
    json_extract(attributes, '$."co.egress.destinations"'),
    json_extract(attributes, '$."co.egress.destination"'),
    json_extract(attributes, '$."co.egress.bytes"'),
    json_extract(attributes, '$."co.egress.sources"'),
    json_extract(attributes, '$."co.egress.outcome"')"""


@dataclass(frozen=True)
class EgressCall:
    """One call that sent data off this machine (an `egress <tool>` span)."""

    span_id: str
    trace_id: str
    start_time: int
    tool: str
    destinations: tuple[str, ...]
    bytes_sent: int
    sources: tuple[str, ...]  # private or untrusted content in the conversation at the time
    outcome: str  # sent, refused (nothing was sent) or failed
    turn_start: int  # the start of the turn (the trace's root span) it belongs to


def _strings(value: Any) -> tuple[str, ...]:
    loaded = _loads(value, []) if isinstance(value, str) else value
    return tuple(str(v) for v in loaded) if isinstance(loaded, list) else ()


def egress_calls(conn: sqlite3.Connection, limit: int = 200) -> list[EgressCall]:
    """The newest `limit` outbound calls, grouped by turn: the newest turn first, each
    turn's calls in the order they happened (uses idx_spans_name and idx_spans_trace_id)."""
    rows = list(
        conn.execute(
            f"SELECT {_EGRESS_COLUMNS} FROM spans WHERE name >= ? AND name < ? "
            "ORDER BY start_time DESC LIMIT ?",
            (EGRESS_PREFIX, EGRESS_PREFIX[:-1] + "!", limit),  # the range of the name prefix
        )
    )
    traces = sorted({r[1] for r in rows})
    turns: dict[str, int] = {}
    if traces:
        marks = ", ".join("?" * len(traces))
        for trace_id, start in conn.execute(
            f"SELECT trace_id, min(start_time) FROM spans WHERE trace_id IN ({marks}) "
            "AND parent_id IS NULL GROUP BY trace_id",
            traces,
        ):
            turns[trace_id] = int(start)
    calls = [
        EgressCall(
            span_id=r[0],
            trace_id=r[1],
            start_time=int(r[2]),
            tool=str(r[3] or ""),
            destinations=_strings(r[4]) or ((str(r[5]),) if r[5] else ()),
            bytes_sent=int(r[6] or 0),
            sources=_strings(r[7]),
            outcome=str(r[8] or "sent"),
            turn_start=turns.get(r[1], int(r[2])),
        )
        for r in rows
    ]
    return sorted(calls, key=lambda c: (-c.turn_start, c.trace_id, c.start_time))
