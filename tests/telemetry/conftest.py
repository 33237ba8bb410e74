"""Telemetry tests: a real tracer provider per test, writing to a database in tmp_path."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from co_tui.config.settings import Settings
from co_tui.telemetry import Telemetry, setup_telemetry, shutdown_telemetry


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "co-tui.db"


@pytest.fixture
def telemetry(db_path: Path) -> Iterator[Telemetry]:
    tel = setup_telemetry(Settings(), db_path)
    assert tel is not None
    yield tel
    shutdown_telemetry()


def rows(db: Path, sql: str = "SELECT * FROM spans", params: tuple = ()) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return list(conn.execute(sql, params))
    finally:
        conn.close()
