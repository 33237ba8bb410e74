"""Desktop notifications from the daemon: a fake `notify-send` (and `osascript`) first on
PATH records the argv it was given, one JSON list per line. What a job's answer holds (a
model's or a mail's text) arrives as one line with every hidden character escaped, after `--`;
no graphical session, no notifier, a notifier that fails or hangs: False, never an exception.
The daemon tells the desktop how a run ended, unless the user's settings say
`notifications: false`."""

from __future__ import annotations

import json
import os
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from co_tui.config.paths import project_settings_path
from co_tui.daemon.notify import (
    announce,
    desktop_notify,
    job_notice,
    notifications_wanted,
)
from co_tui.session.jobs.run import RunOutcome
from co_tui.store.job_schedule import parse_schedule
from co_tui.store.jobs_store import Job, RunState
from tests.helpers import wait_for
from tests.jobs.conftest import fake_notifier, sent
from tests.jobs.test_daemon import co_tui, daemon, jobs, model_env
from tests.servers.fake_openai import serve, text

ESC = "\x1b"


def test_title_and_body_go_as_arguments_of_their_own(recorder: Path) -> None:
    assert desktop_notify("co-tui job ab12cd34", "The backups finished: 3 of 3")
    assert sent(recorder) == [
        ["--app-name=co-tui", "--", "co-tui job ab12cd34", "The backups finished: 3 of 3"]
    ]


def test_a_body_like_an_option_comes_after_the_double_dash(recorder: Path) -> None:
    assert desktop_notify("--urgency=critical", "--icon=/etc/passwd")
    assert sent(recorder) == [
        ["--app-name=co-tui", "--", "--urgency=critical", "--icon=/etc/passwd"]
    ]


def test_hidden_characters_arrive_escaped_on_one_line(recorder: Path) -> None:
    hostile = f"a{ESC}]0;pwned\a b{ESC}[2J\nsecond line\r\nfake\u202eexe.txt"
    assert desktop_notify(f"job{ESC}[31m\n", hostile)
    ((_, _, title, body),) = sent(recorder)
    assert title == "job\\x1b[31m"
    assert body == "a\\x1b]0,pwned\\x07 b\\x1b[2J second line fake\\u202eexe.txt"
    for shown in (title, body):
        assert shown.isprintable() and ESC not in shown and "\u202e" not in shown


def test_long_texts_are_cut(recorder: Path) -> None:
    assert desktop_notify("t" * 100, "x" * 5000)
    ((_, _, title, body),) = sent(recorder)
    assert len(title) == 40 and title.endswith("…")
    assert len(body) == 160 and body == "x" * 159 + "…"


def test_no_graphical_session_runs_nothing(recorder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    assert not desktop_notify("co-tui job x", "done")
    assert sent(recorder) == []
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert desktop_notify("co-tui job x", "done")  # any one of the variables will do
    assert len(sent(recorder)) == 1


def test_no_notifier_on_path(recorder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(recorder.parent / "nothing-here"))
    assert not desktop_notify("co-tui job x", "done")
    assert sent(recorder) == []


@pytest.mark.parametrize("body", ["#!/bin/sh\nexit 1\n", "#!/bin/sh\nexec sleep 60\n"])
def test_a_notifier_that_fails_or_hangs_is_false(recorder: Path, body: str) -> None:
    fake_notifier(recorder.parent, body)
    assert not desktop_notify("co-tui job x", "done", timeout=0.5)


def test_windows_has_no_notifier(recorder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    assert not desktop_notify("co-tui job x", "done")
    assert sent(recorder) == []


def test_macos_passes_the_texts_as_applescript_argv(
    recorder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_notifier(recorder.parent, name="osascript")
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")  # macOS needs no session variable
    assert desktop_notify('say "hi"', "it's done\n-- end run")
    assert sent(recorder) == [
        [
            "-e",
            "on run argv",
            "-e",
            "display notification (item 2 of argv) with title (item 1 of argv)",
            "-e",
            "end run",
            'say "hi"',
            "it's done -- end run",
        ]
    ]


def outcome(
    state: RunState = "done", held: int = 0, detail: str = "", answer: str = ""
) -> RunOutcome:
    return RunOutcome(state, "s" * 16, held, detail, answer)


HEADLINE = (
    "4 events in the next 24 hours; 1 unread mail; 1 note changed; "
    "0 proposals wait for your approval."
)


def test_a_briefing_shows_its_headline() -> None:
    answer = f"{HEADLINE}\n\nYour day starts with the stand-up.\n- 09:00 Stand-up"
    assert job_notice("b1", "briefing", outcome(answer=answer)) == ("co-tui briefing", HEADLINE)


def test_a_failed_run_says_why() -> None:
    failed = outcome("failed", detail="no project files; ModelHTTPError: 500")
    expected = ("co-tui job j1", "failed: no project files; ModelHTTPError: 500")
    assert job_notice("j1", "prompt", failed) == expected
    assert job_notice("b1", "briefing", failed) == ("co-tui briefing", expected[1])


def test_held_calls_point_at_the_inbox() -> None:
    held = outcome(held=2, answer="I proposed two commands.")
    assert job_notice("j1", "prompt", held) == (
        "co-tui job j1",
        "2 proposal(s) wait in your inbox (co-tui inbox)",
    )


def test_a_prompt_run_shows_its_answers_first_line() -> None:
    done = outcome(answer="\n\n  The backups finished.  \nAll 3 hosts answered.")
    assert job_notice("j1", "prompt", done) == ("co-tui job j1", "The backups finished.")


def test_nothing_to_say() -> None:
    assert job_notice("j1", "prompt", outcome(answer="  \n")) is None
    assert job_notice("j1", "prompt", outcome("interrupted", answer="half")) is None
    assert job_notice("j1", "prompt", outcome("running")) is None


def a_job(workspace: Path) -> Job:
    return Job(
        "ab12cd34",
        "check the backups",
        parse_schedule("every day at 9:00", datetime(2026, 12, 1, tzinfo=UTC)),
        workspace,
        datetime(2026, 12, 1, tzinfo=UTC),
        paused=False,
    )


def test_the_users_settings_can_turn_notifications_off(recorder: Path, tmp_path: Path) -> None:
    assert notifications_wanted()
    job, done = a_job(tmp_path), outcome(answer="The backups finished.")
    assert announce(job, done) == "co-tui job ab12cd34"
    assert sent(recorder) == [
        ["--app-name=co-tui", "--", "co-tui job ab12cd34", "The backups finished."]
    ]

    settings = Path(os.environ["XDG_CONFIG_HOME"]) / "co-tui" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"notifications": False}))
    assert not notifications_wanted()
    assert announce(job, done) is None
    assert len(sent(recorder)) == 1


def test_a_project_cannot_turn_them_on(recorder: Path, tmp_path: Path) -> None:
    settings = Path(os.environ["XDG_CONFIG_HOME"]) / "co-tui" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"notifications": False}))
    project = project_settings_path(tmp_path / "ws")
    project.parent.mkdir(parents=True)
    project.write_text(json.dumps({"notifications": True}))
    assert announce(a_job(tmp_path / "ws"), outcome(answer="done")) is None
    assert sent(recorder) == []


@pytest.mark.e2e
def test_the_daemon_notifies_when_a_job_ends(recorder: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    answer = "All 3 backups finished; the newest is from 02:00.\nNothing else to report."
    with serve([text(answer)]) as srv:
        env = model_env(srv.url)  # the fake notify-send and the session, as set above
        added = co_tui(["jobs", "add", "in 1 second", "check the backups"], workspace, env)
        assert added.returncode == 0, added.stderr
        (job,) = jobs().jobs()
        log = tmp_path / "daemon.log"
        proc = daemon(tmp_path, env, log)
        try:
            wait_for(lambda: sent(recorder), "the desktop notification", proc)
            wait_for(lambda: "notified:" in log.read_text(), "the daemon's report", proc)
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0
    title = f"co-tui job {job.id}"
    assert sent(recorder) == [
        ["--app-name=co-tui", "--", title, "All 3 backups finished, the newest is from 02:00."]
    ]
    assert f"notified: {title}" in log.read_text()
