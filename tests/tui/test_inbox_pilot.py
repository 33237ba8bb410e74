"""`/inbox` in the app: it lists what jobs proposed; `/inbox approve ID` shows the proposal
in the approval dialog before anything runs, `y` runs it once, `n` denies it; a proposal
whose row was edited in the database is refused before any dialog opens."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from co_tui.store.job_schedule import parse_schedule
from co_tui.store.jobs_store import JobStore
from co_tui.tui.screens.approval import ApprovalScreen
from tests.jobs.helpers import propose_commands
from tests.tui.helpers import approval_dialog, make_app, shell_then_text, wait_until
from tests.tui.test_permissions_pilot import command_outputs, submit

pytestmark = pytest.mark.usefixtures("allow_model_requests")

COMMANDS = ["echo one >> ran.txt", "echo two >> ran.txt", "echo three >> ran.txt"]


def ran(workspace: Path) -> list[str]:
    path = workspace / "ran.txt"
    return path.read_text().split() if path.exists() else []


def states() -> list[str]:
    store = JobStore(Path(os.environ["XDG_DATA_HOME"]) / "co-tui" / "jobs.db")
    try:
        return [p.state for p in store.proposals(state=None)]
    finally:
        store.close()


async def said(pilot: Any, app: Any, count: int) -> str:
    await wait_until(pilot, lambda: len(command_outputs(app)) >= count, f"output {count}")
    return command_outputs(app)[count - 1]


@pytest.mark.slow
async def test_the_inbox_in_the_app_shows_the_dialog_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, third = await propose_commands(tmp_path, COMMANDS, monkeypatch)
    with sqlite3.connect(Path(os.environ["XDG_DATA_HOME"]) / "co-tui" / "jobs.db") as db:
        db.execute(
            "UPDATE proposals SET args=? WHERE nonce LIKE ?",
            (json.dumps({"cmd": "echo pwned >> ran.txt"}), third + "%"),
        )
    app = make_app(shell_then_text([]), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.chat.status.inbox == 3, "the status bar's count")
        await submit(pilot, app, "/inbox")
        listing = await said(pilot, app, 1)
        assert all(short_id in listing for short_id in (first, second, third))
        assert "echo one >> ran.txt" in listing

        await submit(pilot, app, f"/inbox approve {first}")
        screen = await approval_dialog(pilot, app)
        assert screen.request.args == {"cmd": "echo one >> ran.txt"}
        assert "from the inbox" in screen.request.reason
        assert ran(tmp_path) == []  # the dialog is up: nothing ran yet
        await pilot.press("y")
        assert "approved" in await said(pilot, app, 2)
        assert ran(tmp_path) == ["one"]

        await submit(pilot, app, f"/inbox approve {second}")
        await approval_dialog(pilot, app)
        await pilot.press("n")
        assert "denied" in await said(pilot, app, 3)

        await submit(pilot, app, f"/inbox approve {third}")
        refused = await said(pilot, app, 4)
        assert "Refused" in refused and "arguments were changed" in refused
        assert not isinstance(app.screen, ApprovalScreen)
        await wait_until(pilot, lambda: app.chat.status.inbox == 1, "the count after deciding")
    assert ran(tmp_path) == ["one"]
    assert states() == ["approved", "denied", "waiting"]


async def test_jobs_lists_the_jobs_and_says_no_daemon_runs_them(tmp_path: Path) -> None:
    store = JobStore(Path(os.environ["XDG_DATA_HOME"]) / "co-tui" / "jobs.db")
    now = datetime.now(UTC)
    job = store.add("", parse_schedule("every weekday at 7:30", now), tmp_path, kind="briefing")
    store.close()
    app = make_app(shell_then_text([]), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, app, "/jobs")
        listing = await said(pilot, app, 1)
    assert job.id in listing and "every weekday at 7:30" in listing and "briefing" in listing
    assert "No daemon runs them" in listing


async def test_what_an_approved_proposal_printed_is_shown_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's output ends up in the decision's line: a terminal title sequence in it
    arrives as text, never as an escape the terminal would act on."""
    (only,) = await propose_commands(tmp_path, ["printf '\\033]0;pwned\\007 done'"], monkeypatch)
    app = make_app(shell_then_text([]), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, app, f"/inbox approve {only}")
        await approval_dialog(pilot, app)
        await pilot.press("y")
        decided = await said(pilot, app, 1)
    assert "approved" in decided
    assert "\x1b" not in decided and "\x07" not in decided
    assert "\\x1b]0;pwned" in decided
