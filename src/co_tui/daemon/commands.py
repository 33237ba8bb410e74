"""`co-tui jobs …`, `co-tui inbox` and `co-tui daemon`: the command line of jobs."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from co_tui.daemon.install import Kind
from co_tui.safety.visible import visible, visible_line
from co_tui.session.jobs.listing import local_time
from co_tui.store.job_kinds import CatchUp, JobKind

if TYPE_CHECKING:
    from co_tui.store.jobs_store import JobStore

EXIT_ERROR = 1
EXIT_USAGE = 2

jobs_app = typer.Typer(
    help="Prompts that run on a schedule, while nobody types (run by `co-tui daemon`).",
    no_args_is_help=True,
)


def _err(message: str) -> None:
    typer.echo(f"co-tui: {visible(message, keep='')}", err=True)


def _fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    _err(message)
    return typer.Exit(code)


def _store() -> JobStore:
    from co_tui.store.jobs_store import JobStore

    return JobStore()


@jobs_app.command("add")
def add_command(
    schedule: Annotated[
        str,
        typer.Argument(
            help="When: 'every weekday at 8:00', 'in 20 minutes', 'tomorrow 9am', or cron "
            "('0 8 * * 1-5'), in your time zone."
        ),
    ],
    prompt: Annotated[
        str,
        typer.Argument(
            help="What the job asks, as you would type it (with --briefing: what the "
            "summary should keep in mind, optional)."
        ),
    ] = "",
    timezone: Annotated[
        str | None, typer.Option("--timezone", help="An IANA zone (default: the system's).")
    ] = None,
    briefing: Annotated[
        bool,
        typer.Option(
            "--briefing",
            help="A morning briefing: today's calendar, unread mail, changed notes and "
            "the inbox, gathered by co-tui and summarised by the model.",
        ),
    ] = False,
    catch_up: Annotated[
        CatchUp,
        typer.Option(
            "--catch-up",
            help="Runs missed while nothing ran (a laptop asleep): 'latest' makes up the "
            "latest once, 'skip' makes up none.",
        ),
    ] = "latest",
) -> None:
    """Add a job that runs PROMPT in this directory on SCHEDULE."""
    from co_tui.store.job_schedule import ScheduleError, parse_schedule
    from co_tui.store.jobs_runner_lock import wake_daemon

    if not prompt.strip() and not briefing:
        raise _fail("the prompt is empty", EXIT_USAGE)
    now = datetime.now(UTC)
    try:
        parsed = parse_schedule(schedule, now, timezone)
    except ScheduleError as exc:
        raise _fail(str(exc), EXIT_USAGE) from None
    store = _store()
    try:
        kind: JobKind = "briefing" if briefing else "prompt"
        job = store.add(
            prompt.strip(), parsed, Path.cwd().resolve(), created=now, kind=kind, catch_up=catch_up
        )
        due = store.next_due(job)
    finally:
        store.close()
    woke = wake_daemon(store.path)
    typer.echo(f"job {job.id}: next run {local_time(due.fire if due else None)}")
    if not woke:
        typer.echo(
            "no daemon runs: start one with `co-tui daemon` or `co-tui daemon install`"
            " (an open co-tui app runs the jobs too)"
        )


@jobs_app.command("list")
def list_command() -> None:
    """Every job: its id, next run, schedule, state and prompt."""
    from co_tui.session.jobs.listing import job_line

    store = _store()
    try:
        jobs = store.jobs()
        for job in jobs:
            typer.echo(job_line(store, job))
        if not jobs:
            typer.echo("no jobs (co-tui jobs add SCHEDULE PROMPT)")
    finally:
        store.close()


def _set_paused(job_id: str, paused: bool) -> None:
    from co_tui.store.jobs_runner_lock import wake_daemon

    store = _store()
    try:
        if not store.set_paused(job_id, paused):
            raise _fail(f"no job {job_id} (co-tui jobs list)")
    finally:
        store.close()
    wake_daemon(store.path)
    typer.echo(f"job {job_id} {'paused' if paused else 'resumed'}")


@jobs_app.command("pause")
def pause_command(job_id: str) -> None:
    """Stop a job from running until it is resumed."""
    _set_paused(job_id, True)


@jobs_app.command("resume")
def resume_command(job_id: str) -> None:
    """Let a paused job run again (from its next fire time; missed ones are not made up)."""
    _set_paused(job_id, False)


@jobs_app.command("remove")
def remove_command(job_id: str) -> None:
    """Remove a job (its past runs and what they proposed stay)."""
    from co_tui.store.jobs_runner_lock import wake_daemon

    store = _store()
    try:
        if not store.remove(job_id):
            raise _fail(f"no job {job_id} (co-tui jobs list)")
    finally:
        store.close()
    wake_daemon(store.path)
    typer.echo(f"job {job_id} removed")


@jobs_app.command("run-now")
def run_now_command(job_id: str) -> None:
    """Run a job once now, in this terminal (its schedule is unchanged)."""
    from co_tui.session.jobs.run import run_job
    from co_tui.store.jobs_store import Due

    store = _store()
    try:
        job = store.job(job_id)
        if job is None:
            raise _fail(f"no job {job_id} (co-tui jobs list)")
        slot = store.run_now_slot()
        store.claim(Due(job, slot, datetime.now(UTC)))
        outcome = asyncio.run(run_job(store, job, slot))
    finally:
        store.close()
    if outcome.answer:
        typer.echo(visible(outcome.answer, keep="\n"))
    session = f" (session {outcome.session_id[:8]})" if outcome.session_id else ""
    typer.echo(f"job {job_id} {outcome.state}{session}: {visible_line(outcome.detail)}")
    if outcome.state != "done":
        raise typer.Exit(EXIT_ERROR)


inbox_app = typer.Typer(
    help="What jobs proposed: each waits for your decision (list, approve, deny)."
)


@inbox_app.callback(invoke_without_command=True)
def inbox_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """List what jobs proposed and nothing ran yet."""
    if ctx.invoked_subcommand is not None:
        return
    from co_tui.session.jobs.decide import expire_waiting
    from co_tui.session.jobs.listing import proposal_lines

    store = _store()
    try:
        expired = asyncio.run(expire_waiting(store))
        waiting = store.proposals()
    finally:
        store.close()
    for p in expired:
        _err(f"{p.seal.short_id} {p.tool_name} expired without a decision; it will not run")
    for p in waiting:
        if as_json:
            row = {
                "id": p.seal.short_id,
                "job": p.job_id,
                "slot": p.slot,
                "session": p.session_id,
                "tool": p.tool_name,
                "args": p.args,
                "args_sha256": p.args_hash,
                "reason": p.reason,
                "expires": p.seal.expires.isoformat(),
            }
            typer.echo(visible(json.dumps(row, ensure_ascii=False), keep=""))
            continue
        for line in proposal_lines(p):
            typer.echo(line)
    if not waiting and not as_json:
        typer.echo("the inbox is empty")


def _decide(short_id: str, approve: bool) -> None:
    from co_tui.session.jobs import decide
    from co_tui.store.inbox_seal import SigningKey

    store = _store()
    try:
        key = SigningKey()
        decision = decide.approve if approve else decide.deny
        decided = asyncio.run(decision(store, key, short_id))
    except decide.Refused as exc:
        raise _fail(f"refused: {exc}") from None
    except (OSError, ValueError) as exc:
        raise _fail(f"the inbox key cannot be used: {exc}") from None
    finally:
        store.close()
    p = decided.proposal
    typer.echo(f"{p.seal.short_id} {p.tool_name}: {decided.state} ({visible_line(decided.detail)})")
    if decided.state == "failed":
        raise typer.Exit(EXIT_ERROR)


@inbox_app.command("approve")
def approve_command(proposal_id: str) -> None:
    """Run the proposal's call once, exactly as shown, in its job's session."""
    _decide(proposal_id, approve=True)


@inbox_app.command("deny")
def deny_command(proposal_id: str) -> None:
    """Refuse the proposal: it can never run."""
    _decide(proposal_id, approve=False)


@inbox_app.command("rotate-key")
def rotate_key_command() -> None:
    """Sign with a new key: every proposal still waiting becomes void."""
    from co_tui.store.inbox_seal import SigningKey

    try:
        key_id = SigningKey().rotate()
    except (OSError, ValueError) as exc:
        raise _fail(f"the inbox key cannot be used: {exc}") from None
    typer.echo(f"new inbox key {key_id}: proposals signed by the old one are void")


daemon_app = typer.Typer(
    help="Run due jobs until stopped (one daemon per data folder); `install` makes it a "
    "service that starts at login.",
    invoke_without_command=True,
)

KindOption = Annotated[
    Kind | None,
    typer.Option(
        "--kind",
        help="systemd (a user service) or launchd (a macOS agent); default: this system's.",
    ),
]


@daemon_app.callback()
def daemon_command(
    ctx: typer.Context,
    while_pid: Annotated[
        int | None,
        typer.Option(
            "--while-pid",
            help="Stop when this process ends (how the app runs jobs while it is open).",
        ),
    ] = None,
) -> None:
    """Run due jobs until stopped (one daemon per data folder)."""
    if ctx.invoked_subcommand is not None:
        return
    from co_tui.daemon.runner import serve
    from co_tui.store.jobs_runner_lock import DaemonRunning

    try:
        asyncio.run(serve(while_pid=while_pid))
    except DaemonRunning as exc:
        raise _fail(str(exc)) from None


def _out(message: str) -> None:
    typer.echo(visible(message, keep=""))


@daemon_app.command("install")
def install_command(
    kind: KindOption = None,
    print_only: Annotated[
        bool, typer.Option("--print", help="Write nothing: print the file to standard output.")
    ] = False,
) -> None:
    """Run the daemon as a systemd user service or a launchd agent, started at login."""
    from co_tui.daemon.install import InstallError, default_kind, install, service_file

    chosen = kind or default_kind()
    try:
        if print_only:
            sys.stdout.write(service_file(chosen).decode())
            sys.stdout.flush()
            return
        done = install(chosen, say=_out, warn=_err)
    except InstallError as exc:
        raise _fail(f"nothing installed: {exc}") from None
    except OSError as exc:
        raise _fail(f"cannot write the service file: {exc}") from None
    if not done:
        raise typer.Exit(EXIT_ERROR)


@daemon_app.command("uninstall")
def uninstall_command(kind: KindOption = None) -> None:
    """Stop the service or agent and remove its file."""
    from co_tui.daemon.install import default_kind, uninstall

    try:
        done = uninstall(kind or default_kind(), say=_out, warn=_err)
    except OSError as exc:
        raise _fail(f"cannot remove the service file: {exc}") from None
    if not done:
        raise typer.Exit(EXIT_ERROR)
