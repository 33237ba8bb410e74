"""Telemetry: OpenTelemetry spans into a local SQLite file, redacted; queries for the viewer
and the traces page. Importing this package is cheap: the SDK loads in setup_telemetry()."""

from co_tui.telemetry.setup import (
    Telemetry,
    TelemetryUnavailable,
    active_telemetry,
    create_telemetry,
    setup_telemetry,
    shutdown_telemetry,
)
from co_tui.telemetry.store import default_db_path

__all__ = [
    "Telemetry",
    "TelemetryUnavailable",
    "active_telemetry",
    "create_telemetry",
    "default_db_path",
    "setup_telemetry",
    "shutdown_telemetry",
]
