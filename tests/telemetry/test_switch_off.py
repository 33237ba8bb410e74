"""telemetry_enabled=false: no provider, no spans, no database file."""

from __future__ import annotations

from pathlib import Path

from co_tui.config.paths import user_data_dir
from co_tui.config.settings import Settings
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.telemetry import active_telemetry, default_db_path, setup_telemetry
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps


async def test_off_creates_no_database(tmp_path: Path) -> None:
    settings = Settings(telemetry_enabled=False)
    assert setup_telemetry(settings) is None
    assert active_telemetry() is None
    model = ScriptedModel([Call("run_shell_command", {"cmd": "echo hi"}, "c1")], ["ok"])
    result = await run_turn(
        make_bundle(model.model, settings).agent,
        "go",
        deps=make_deps(tmp_path, settings),
        history=[],
        frontend=RecordingFrontend([ApprovalDecision.APPROVE]),
    )
    assert result.ok
    assert default_db_path() == user_data_dir() / "co-tui.db"
    assert not default_db_path().exists()
    assert not list(user_data_dir().glob("co-tui.db*"))


def test_setup_is_idempotent(db_path: Path) -> None:
    from co_tui.telemetry import shutdown_telemetry

    try:
        first = setup_telemetry(Settings(), db_path)
        assert first is not None and setup_telemetry(Settings(), db_path) is first
        assert db_path.exists()
    finally:
        shutdown_telemetry()
    assert active_telemetry() is None
