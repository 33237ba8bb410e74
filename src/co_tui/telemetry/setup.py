"""setup_telemetry: one tracer provider per process, writing to SQLite (and OTLP if asked).

Called once at start by the CLI/app; idempotent. Everything heavy (the OpenTelemetry SDK,
the OTLP exporter, pydantic-ai) is imported here, on first use, not at co-tui's start.
"""

from __future__ import annotations

import atexit
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_tui.config.settings import Settings
from co_tui.telemetry.store import default_db_path

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

OTLP_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
SERVICE_NAME = "co-tui"
# Bursts (a sub-agent, a long tool loop) must not drop spans: the SDK default queue is 2,048.
MAX_QUEUE_SIZE = 1_000_000
MAX_EXPORT_BATCH = 2_048
SCHEDULE_DELAY_S = 0.2  # the live viewer polls every 0.25 s


@dataclass
class Telemetry:
    db_path: Path
    provider: TracerProvider
    tracer: Tracer
    instrumentation: Any  # pydantic_ai InstrumentationSettings
    otlp_endpoint: str | None = None

    def flush(self, timeout_millis: int = 30_000) -> bool:
        return self.provider.force_flush(timeout_millis)


_lock = threading.Lock()
_active: Telemetry | None = None
_atexit_registered = False


def active_telemetry() -> Telemetry | None:
    return _active


def create_telemetry(
    settings: Settings, db_path: Path | None = None, *, max_queue_size: int = MAX_QUEUE_SIZE
) -> Telemetry:
    """A provider writing to `db_path` (default: the user data dir). Not installed globally."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from pydantic_ai import InstrumentationSettings

    from co_tui import __version__
    from co_tui.safety.redaction import Redactor
    from co_tui.telemetry.exporter import SQLiteSpanExporter
    from co_tui.telemetry.quiet_batch import QuietBatchSpanProcessor

    path = db_path or default_db_path()
    redactor = Redactor(settings.secret_values())
    resource = Resource.create({"service.name": SERVICE_NAME, "service.version": __version__})
    # shutdown_on_exit=False: shutdown_telemetry() (atexit) owns the order of flush and close.
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)

    def batch(exporter: Any) -> QuietBatchSpanProcessor:
        return QuietBatchSpanProcessor(
            exporter, delay_s=SCHEDULE_DELAY_S, max_queue=max_queue_size, max_batch=MAX_EXPORT_BATCH
        )

    provider.add_span_processor(batch(SQLiteSpanExporter(path, redactor)))
    endpoint = os.environ.get(OTLP_ENV) or None
    if endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        from co_tui.telemetry.redacting import RedactingExporter

        provider.add_span_processor(batch(RedactingExporter(OTLPSpanExporter(), redactor)))
    # model_request_parameters repeats every tool definition (gen_ai.tool.definitions has
    # them already) and is the largest attribute: leaving it out halves the cost per request.
    instrumentation = InstrumentationSettings(
        tracer_provider=provider,
        include_content=True,
        include_model_request_parameters=False,
        version=5,
    )
    tracer = provider.get_tracer("co_tui", __version__)
    return Telemetry(path, provider, tracer, instrumentation, endpoint)


class TelemetryUnavailable(Exception):
    """Telemetry cannot store its spans (an unwritable data folder): the assistant goes on
    without it, and the message says why, for the front to show once."""


def setup_telemetry(settings: Settings, db_path: Path | None = None) -> Telemetry | None:
    """Install telemetry for this process (once). None when settings switch it off.
    Raises TelemetryUnavailable when its database cannot be opened."""
    global _active, _atexit_registered
    if not settings.telemetry_enabled:
        return None
    with _lock:
        if _active is not None:
            return _active
        from pydantic_ai import Agent

        try:
            telemetry = create_telemetry(settings, db_path)
        except Exception as exc:  # an unwritable data dir must not stop the assistant
            why = str(exc)
            if isinstance(exc, OSError) and exc.filename and exc.strerror:
                why = f"cannot use {exc.filename}: {exc.strerror}"
            raise TelemetryUnavailable(f"telemetry is off (no spans are kept): {why}") from None
        Agent.instrument_all(telemetry.instrumentation)
        _active = telemetry
        if not _atexit_registered:
            atexit.register(shutdown_telemetry)
            _atexit_registered = True
        return telemetry


def shutdown_telemetry() -> None:
    """Flush every pending span, close the database, and switch instrumentation off."""
    global _active
    with _lock:
        telemetry, _active = _active, None
    if telemetry is None:
        return
    from pydantic_ai import Agent

    Agent.instrument_all(False)
    telemetry.provider.shutdown()
