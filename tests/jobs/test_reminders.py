"""set_reminder: the model proposes, the user approves in the dialog, a one-time reminder
job is filed; the daemon raises it as a desktop notification and runs nothing else."""

from __future__ import annotations

import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.store.job_schedule import parse_schedule
from co_tui.store.jobs_store import JobStore, jobs_path
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, wait_for
from tests.jobs.conftest import sent
from tests.jobs.test_daemon import co_tui, daemon, model_env
from tests.servers.fake_openai import serve, text

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


async def remind(tmp_path: Path, args: dict[str, Any], decision: ApprovalDecision) -> Any:
    deps = make_deps(tmp_path)
    deps.clock = lambda: NOW
    frontend = RecordingFrontend([decision])
    model = ScriptedModel([Call("set_reminder", args, "r1")], ["Noted."])
    result = await run_turn(
        make_bundle(model.model).agent, "remind me", deps=deps, history=[], frontend=frontend
    )
    return result, frontend, model


def reminders() -> list[Any]:
    if not jobs_path().exists():
        return []
    store = JobStore()
    try:
        return [job for job in store.jobs() if job.kind == "reminder"]
    finally:
        store.close()


async def test_an_approved_reminder_is_filed_for_that_moment(tmp_path: Path) -> None:
    args = {"when": "in 20 minutes", "text": "stretch"}
    result, frontend, _ = await remind(tmp_path, args, ApprovalDecision.APPROVE)
    (request,) = frontend.approval_requests
    assert request.tool_name == "set_reminder" and "schedules a reminder" in request.reason
    assert result.ok
    (job,) = reminders()
    assert job.prompt == "stretch" and job.workspace == tmp_path.resolve()
    assert job.schedule.at is not None
    assert abs(job.schedule.at - (NOW + timedelta(minutes=20))) < timedelta(seconds=1)
    (shown,) = frontend.of("tool_result")
    assert f"Reminder {job.id} set for" in shown.content


async def test_a_denied_reminder_files_nothing(tmp_path: Path) -> None:
    result, _, _ = await remind(
        tmp_path, {"when": "in 20 minutes", "text": "stretch"}, ApprovalDecision.DENY
    )
    assert result.ok and reminders() == []


@pytest.mark.parametrize(
    ("when", "text", "told"),
    [
        ("every day at 9:00", "stretch", "a reminder is for one moment"),
        ("in 20 minutes", "   ", "The reminder is empty"),
        ("when pigs fly", "stretch", "Say when as 'in 20 minutes'"),
        ("yesterday 9am", "stretch", "passed"),
    ],
)
async def test_what_cannot_be_a_reminder_goes_back_to_the_model(
    tmp_path: Path, when: str, text: str, told: str
) -> None:
    _, _, model = await remind(tmp_path, {"when": when, "text": text}, ApprovalDecision.APPROVE)
    assert reminders() == []
    retried = str(model.seen[-1][-1])
    assert told in retried, retried


@pytest.mark.e2e
def test_the_daemon_raises_a_due_reminder_and_runs_nothing_else(
    recorder: Path, tmp_path: Path
) -> None:
    """No model answers: a reminder needs none (the server would fail the run if asked)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = JobStore()
    now = datetime.now(UTC)
    due = parse_schedule("in 1 second", now)
    store.add("Take the laundry out", due, workspace, created=now, kind="reminder")
    store.close()
    with serve([], default=text("a model was asked")) as srv:
        env = model_env(srv.url)
        log = tmp_path / "daemon.log"
        proc = daemon(tmp_path, env, log)
        try:
            wait_for(lambda: sent(recorder), "the reminder's notification", proc)
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0
        assert srv.requests == []
    assert sent(recorder) == [
        ["--app-name=co-tui", "--", "co-tui reminder", "Take the laundry out"]
    ]
    assert co_tui(["jobs", "list"], workspace, env).stdout.count("reminder") == 1
