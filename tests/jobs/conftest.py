"""The jobs tests' desktop: a recording notify-send (tests/jobs/test_notify.py,
test_reminders.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from co_tui.daemon.notify import SESSION_VARIABLES

RECORDER = f"""#!{sys.executable}
import json, os, sys
with open(os.environ["FAKE_NOTIFY_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def fake_notifier(tmp_path: Path, body: str = RECORDER, name: str = "notify-send") -> Path:
    """`name` in tmp_path/bin running `body`; the file its argv goes to (FAKE_NOTIFY_LOG)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(body)
    script.chmod(0o755)
    return tmp_path / "notified.jsonl"


def sent(log: Path) -> list[list[str]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.fixture
def recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A recording notify-send first on PATH, a (dummy) desktop session, Linux."""
    log = fake_notifier(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NOTIFY_LOG", str(log))
    for name in SESSION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
    monkeypatch.setattr(sys, "platform", "linux")
    return log
