"""SQLiteSpanExporter: finished spans, redacted, into the `spans` table."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import format_span_id, format_trace_id

from co_tui.safety.redaction import Redactor
from co_tui.telemetry.store import open_for_writing

INSERT = """
INSERT OR REPLACE INTO spans (id, trace_id, parent_id, name, kind, start_time, end_time,
    duration_ms, status_code, status_description, attributes, events, resource)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

Row = tuple[Any, ...]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def span_row(span: ReadableSpan, redactor: Redactor) -> Row:
    ctx = span.get_span_context()
    parent = span.parent
    start = span.start_time or 0
    end = span.end_time
    events = [
        {
            "name": event.name,
            "timestamp": event.timestamp,
            "attributes": redactor.value(dict(event.attributes or {})),
        }
        for event in span.events
    ]
    return (
        format_span_id(ctx.span_id) if ctx else "",
        format_trace_id(ctx.trace_id) if ctx else "",
        format_span_id(parent.span_id) if parent else None,
        redactor.text(span.name),
        span.kind.name,
        start,
        end,
        (end - start) / 1e6 if end is not None else None,
        span.status.status_code.name,
        redactor.text(span.status.description) if span.status.description else None,
        _dumps(redactor.value(dict(span.attributes or {}))),
        _dumps(events),
        _dumps(redactor.value(dict(span.resource.attributes))),
    )


class SQLiteSpanExporter(SpanExporter):
    def __init__(self, db_path: Path, redactor: Redactor | None = None) -> None:
        self.db_path = db_path
        self.redactor = redactor or Redactor()
        self._conn = open_for_writing(db_path)
        self._lock = threading.Lock()
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        rows = [span_row(span, self.redactor) for span in spans]
        with self._lock:
            if self._closed:
                return SpanExportResult.FAILURE
            try:
                with self._conn:
                    self._conn.executemany(INSERT, rows)
            except Exception:  # a locked or full disk must not break the app
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def shutdown(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()
