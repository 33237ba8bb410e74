"""RedactingExporter: hands another exporter (OTLP) copies of spans with secrets removed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from co_tui.safety.redaction import Redactor


def _attributes(redactor: Redactor, attributes: Any) -> dict[str, Any]:
    return {k: redactor.value(v) for k, v in dict(attributes or {}).items()}


def redacted_copy(span: ReadableSpan, redactor: Redactor) -> ReadableSpan:
    status = span.status
    return ReadableSpan(
        name=redactor.text(span.name),
        context=span.get_span_context(),
        parent=span.parent,
        resource=span.resource,
        attributes=_attributes(redactor, span.attributes),
        events=[
            Event(e.name, _attributes(redactor, e.attributes), e.timestamp) for e in span.events
        ],
        links=span.links,
        kind=span.kind,
        status=Status(status.status_code, redactor.text(status.description or "") or None),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class RedactingExporter(SpanExporter):
    def __init__(self, inner: SpanExporter, redactor: Redactor) -> None:
        self.inner = inner
        self.redactor = redactor

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([redacted_copy(s, self.redactor) for s in spans])

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()
