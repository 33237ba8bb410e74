"""Fixed spans (ids, times, attributes) written through the real SQLite exporter."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from co_tui.telemetry.exporter import SQLiteSpanExporter

BASE_NS = 1_767_225_600_000_000_000  # 2026-01-01 00:00:00 UTC
RESOURCE = Resource.create({"service.name": "co-tui", "service.version": "0.1.0"})
MS = 1_000_000


TRACE_BASE = 0x4BF92F3577B34DA6A3CE929D0E0E4700  # ids that look like real ones
SPAN_BASE = 0x00F067AA0BA90200


def _ctx(trace: int, span: int) -> SpanContext:
    return SpanContext(
        TRACE_BASE + trace, SPAN_BASE + span, is_remote=False, trace_flags=TraceFlags(1)
    )


def span(
    name: str,
    trace: int,
    span_id: int,
    parent: int | None,
    start_ms: float,
    dur_ms: float,
    attributes: dict | None = None,
    *,
    error: str | None = None,
    events: list[Event] | None = None,
    base_ns: int = BASE_NS,
) -> ReadableSpan:
    start = base_ns + int(start_ms * MS)
    return ReadableSpan(
        name=name,
        context=_ctx(trace, span_id),
        parent=_ctx(trace, parent) if parent else None,
        resource=RESOURCE,
        attributes=attributes or {},
        events=events or [],
        kind=SpanKind.INTERNAL,
        status=Status(StatusCode.ERROR, error) if error else Status(StatusCode.UNSET),
        start_time=start,
        end_time=start + int(dur_ms * MS),
    )


def turn_trace(
    trace: int, *, base_ns: int = BASE_NS, tool_error: bool = False
) -> list[ReadableSpan]:
    """One turn: agent run, two model requests, an approved shell call in the sandbox."""
    s = trace * 100
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gemini-2.5-flash",
        "gen_ai.usage.input_tokens": 812,
        "gen_ai.usage.output_tokens": 64,
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"content": "hi"}]}]),
    }
    tool = {
        "gen_ai.tool.name": "run_shell_command",
        "gen_ai.tool.call.arguments": json.dumps({"cmd": "ls -la"}),
    }
    err = "exit 2" if tool_error else None
    events = (
        [Event("exception", {"exception.type": "ModelRetry", "exception.message": "exit 2"},
               base_ns + 95 * MS)]
        if tool_error
        else []
    )  # fmt: skip
    return [
        span("turn", trace, s + 1, None, 0, 420, {"co.session_id": "sess-1",
             "gen_ai.usage.input_tokens": 1700, "gen_ai.usage.output_tokens": 90},
             base_ns=base_ns),
        span("invoke_agent co", trace, s + 2, s + 1, 2, 130, {"gen_ai.agent.name": "co"},
             base_ns=base_ns),
        span("chat gemini-2.5-flash", trace, s + 3, s + 2, 3, 120, chat, base_ns=base_ns),
        span("approval run_shell_command", trace, s + 4, s + 1, 135, 40,
             {"co.approval.decision": "approve", "co.approval.args_sha256": "ab" * 32},
             base_ns=base_ns),
        span("invoke_agent co", trace, s + 5, s + 1, 180, 235, {"gen_ai.agent.name": "co"},
             base_ns=base_ns),
        span("execute_tool run_shell_command", trace, s + 6, s + 5, 182, 60, tool, error=err,
             events=events, base_ns=base_ns),
        span("sandbox_command", trace, s + 7, s + 6, 183, 55,
             {"co.sandbox.command": "ls -la", "co.sandbox.exit_code": 2 if tool_error else 0},
             base_ns=base_ns),
        span("chat gemini-2.5-flash", trace, s + 8, s + 5, 250, 160, chat, base_ns=base_ns),
    ]  # fmt: skip


def write(db: Path, spans: list[ReadableSpan]) -> None:
    exporter = SQLiteSpanExporter(db)
    try:
        exporter.export(spans)
    finally:
        exporter.shutdown()
