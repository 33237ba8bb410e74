"""OTEL_EXPORTER_OTLP_ENDPOINT set: spans also go to that OTLP/HTTP endpoint, redacted."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from co_tui.config.settings import Settings
from co_tui.telemetry import setup_telemetry, shutdown_telemetry

SECRET = "sk-" + "Q" * 40


class Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]] = []  # noqa: RUF012

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Collector.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[str]:
    Collector.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_spans_reach_the_otlp_endpoint_redacted(
    collector: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector)
    telemetry = setup_telemetry(Settings(), tmp_path / "co-tui.db")
    assert telemetry is not None and telemetry.otlp_endpoint == collector
    try:
        tracer = telemetry.tracer
        with tracer.start_as_current_span("outer", attributes={"key": SECRET}):
            tracer.start_span("inner").end()
    finally:
        shutdown_telemetry()
    names, values = [], []
    for path, body in Collector.received:
        assert path == "/v1/traces"
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    names.append(span.name)
                    values += [a.value.string_value for a in span.attributes]
    assert sorted(names) == ["inner", "outer"]
    assert "[REDACTED]" in values and not any(SECRET in v for v in values)
    assert all(SECRET.encode() not in body for _, body in Collector.received)
