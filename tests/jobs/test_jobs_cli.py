"""`co-tui jobs` and `co-tui inbox` (run in this process): what they print, how they refuse
bad input, and that text a job or a model wrote never reaches the terminal as escapes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from co_tui.store.jobs_store import JobStore
from tests.cli_in_process import Ran, run_co_tui
from tests.jobs.helpers import a_proposal

ESC = "\x1b]52;c;cHduZWQ=\x07\x1b[2J"  # an OSC 52 clipboard write and a screen clear


def cli(args: list[str], cwd: Path) -> Ran:
    return run_co_tui(args, cwd, dict(os.environ))


def store() -> JobStore:
    return JobStore(Path(os.environ["XDG_DATA_HOME"]) / "co-tui" / "jobs.db")


def test_add_list_pause_resume_remove(tmp_path: Path) -> None:
    added = cli(["jobs", "add", "every weekday at 8:00", "Summarise my notes"], tmp_path)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("job ") and "next run" in added.stdout
    assert "no daemon runs" in added.stdout
    job_id = added.stdout.split()[1].rstrip(":")
    (job,) = store().jobs()
    assert job.id == job_id and job.workspace == tmp_path.resolve()

    listed = cli(["jobs", "list"], tmp_path)
    assert job_id in listed.stdout and "every weekday at 8:00" in listed.stdout
    assert cli(["jobs", "pause", job_id], tmp_path).returncode == 0
    assert "paused" in cli(["jobs", "list"], tmp_path).stdout
    assert cli(["jobs", "resume", job_id], tmp_path).returncode == 0
    assert "next " in cli(["jobs", "list"], tmp_path).stdout
    assert cli(["jobs", "remove", job_id], tmp_path).returncode == 0
    assert "no jobs" in cli(["jobs", "list"], tmp_path).stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["jobs", "add", "every fortnight", "x"], "cannot read 'every fortnight'"),
        (["jobs", "add", "in 5 minutes", "   "], "the prompt is empty"),
        (["jobs", "add", "in 5 minutes", "x", "--timezone", "Nowhere/Land"], "Nowhere/Land"),
    ],
)
def test_bad_input_is_named_and_nothing_is_added(
    tmp_path: Path, args: list[str], says: str
) -> None:
    ran = cli(args, tmp_path)
    assert ran.returncode == 2 and says in ran.stderr
    assert store().jobs() == []


def test_an_unknown_job_is_named(tmp_path: Path) -> None:
    for verb in ("pause", "resume", "remove", "run-now"):
        ran = cli(["jobs", verb, "nosuchjob"], tmp_path)
        assert ran.returncode == 1 and "no job nosuchjob" in ran.stderr, verb


def test_escapes_in_a_prompt_or_proposal_never_reach_the_terminal(tmp_path: Path) -> None:
    assert cli(["jobs", "add", "in 5 minutes", f"say {ESC} hi"], tmp_path).returncode == 0
    store().propose(a_proposal(args={"cmd": f"echo {ESC}"}, reason=f"it writes {ESC}"))
    for args in (["jobs", "list"], ["inbox"], ["inbox", "--json"]):
        ran = cli(args, tmp_path)
        assert ran.returncode == 0
        assert "\x1b" not in ran.stdout and "\x07" not in ran.stdout, args
    (line,) = cli(["inbox", "--json"], tmp_path).stdout.splitlines()
    assert json.loads(line)["tool"] == "run_shell_command"


def test_a_briefing_and_a_catch_up_policy_are_kept_and_listed(tmp_path: Path) -> None:
    added = cli(["jobs", "add", "every day at 7:30", "--briefing", "--catch-up", "skip"], tmp_path)
    assert added.returncode == 0, added.stderr
    (job,) = store().jobs()
    assert (job.kind, job.catch_up, job.prompt) == ("briefing", "skip", "")
    listed = cli(["jobs", "list"], tmp_path).stdout
    assert "briefing" in listed and "skips missed runs" in listed
    wrong = cli(["jobs", "add", "every day at 7:30", "x", "--catch-up", "never"], tmp_path)
    assert wrong.returncode == 2 and "never" in wrong.stderr
    empty = cli(["jobs", "add", "every day at 7:30"], tmp_path)
    assert empty.returncode == 2 and "the prompt is empty" in empty.stderr
