"""Jobs, their runs and what their runs proposed, in `jobs.db` in the data folder (0600).

A run is claimed by inserting its (job, slot) row: the primary key lets one process win, so
no slot runs twice, whoever else (a second daemon, the app) tries it. A claimed run that
never finished (its process was killed) is marked `interrupted` and is never run again. A
proposal is keyed by (job, slot, position of the call in the run): a catch-up or a retry of
the same run can never file it twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal, cast, get_args

from co_tui.safety.processes import process_start_time, still_running
from co_tui.store.inbox_seal import Seal, Sealed
from co_tui.store.job_kinds import CatchUp, JobKind
from co_tui.store.job_schedule import Schedule, slot_of

TIMEOUT_S = 10.0
RunState = Literal["running", "done", "failed", "interrupted"]
# A fire time this late when a runner first sees it was missed (a runner wakes at least once
# a minute, so one that runs sees each fire time within a minute).
MISSED_AFTER = timedelta(minutes=5)
# waiting -> approving -> approved | failed; waiting -> denied; waiting -> expired
ProposalState = Literal["waiting", "approving", "approved", "failed", "denied", "expired"]
RUN_NOW = "now:"  # a slot that starts so was asked for by `run-now`, not by the schedule
# At most this many missed fire times are stepped over to find the latest (a minutely job
# after a week asleep is 10,080).
MAX_CATCH_UP_STEPS = 100_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    prompt TEXT NOT NULL,
    schedule TEXT NOT NULL,
    workspace TEXT NOT NULL,
    created TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0,
    kind TEXT NOT NULL DEFAULT 'prompt',
    catch_up TEXT NOT NULL DEFAULT 'latest'
);
CREATE TABLE IF NOT EXISTS runs (
    job_id TEXT NOT NULL,
    slot TEXT NOT NULL,
    fire TEXT NOT NULL,
    claimed TEXT NOT NULL,
    state TEXT NOT NULL,
    pid INTEGER NOT NULL,
    pid_start TEXT NOT NULL,
    finished TEXT,
    session_id TEXT,
    detail TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (job_id, slot)
);
CREATE TABLE IF NOT EXISTS proposals (
    job_id TEXT NOT NULL,
    slot TEXT NOT NULL,
    position INTEGER NOT NULL,
    workspace TEXT NOT NULL,
    session_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    args TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    reason TEXT NOT NULL,
    created TEXT NOT NULL,
    nonce TEXT NOT NULL UNIQUE,
    expires TEXT NOT NULL,
    key_id TEXT NOT NULL,
    signature TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'waiting',
    detail TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (job_id, slot, position)
);
"""


def jobs_path() -> Path:
    from co_tui.config.paths import user_data_dir

    return user_data_dir() / "jobs.db"


@dataclass(frozen=True)
class Job:
    id: str
    prompt: str
    schedule: Schedule
    workspace: Path
    created: datetime
    paused: bool
    kind: JobKind = "prompt"
    catch_up: CatchUp = "latest"


@dataclass(frozen=True)
class Run:
    job_id: str
    slot: str
    fire: datetime
    state: RunState
    session_id: str | None
    detail: str


@dataclass(frozen=True)
class Due:
    """A job's run that is due: its slot and the fire time it stands for."""

    job: Job
    slot: str
    fire: datetime


@dataclass(frozen=True)
class Proposal:
    """A call a job's run asked for: what its seal covers (`what`), the arguments as stored,
    and the seal (store/inbox_seal.py)."""

    what: Sealed
    args: dict[str, object]
    reason: str
    created: datetime
    seal: Seal
    state: ProposalState = "waiting"
    detail: str = ""  # how a decision went

    @property
    def job_id(self) -> str:
        return self.what.job_id

    @property
    def slot(self) -> str:
        return self.what.slot

    @property
    def position(self) -> int:
        return self.what.position

    @property
    def workspace(self) -> Path:
        """Where it runs (sealed: the jobs table is not)."""
        return Path(self.what.workspace)

    @property
    def session_id(self) -> str:
        return self.what.session_id

    @property
    def tool_name(self) -> str:
        return self.what.tool_name

    @property
    def args_hash(self) -> str:
        return self.what.args_hash


def _job_kind(text: str) -> JobKind:
    for kind in get_args(JobKind):
        if text == kind:
            return cast(JobKind, kind)
    return "prompt"


def _catch_up(text: str) -> CatchUp:
    return "skip" if text == "skip" else "latest"


def _proposal_state(text: str) -> ProposalState:
    for state in get_args(ProposalState):
        if text == state:
            return cast(ProposalState, state)
    return "failed"  # written by something else: never "waiting"


def _now() -> datetime:
    return datetime.now(UTC)


class JobStore:
    def __init__(self, path: Path | None = None) -> None:
        from co_tui.safety.private_files import open_private_db

        self.path = path or jobs_path()
        self._conn = open_private_db(self.path, timeout=TIMEOUT_S)
        self._conn.executescript(_SCHEMA)
        self._add_missing_columns()

    def _add_missing_columns(self) -> None:
        """A jobs.db written before jobs had kinds and catch-up policies."""
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(jobs)")}
        added = {"kind": "'prompt'", "catch_up": "'latest'"}
        for name, default in added.items():
            if name not in columns:
                with self._write() as db:
                    db.execute(
                        f"ALTER TABLE jobs ADD COLUMN {name} TEXT NOT NULL DEFAULT {default}"
                    )

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._conn:  # one transaction, committed or rolled back
            yield self._conn

    # --- jobs ---------------------------------------------------------------------------

    def add(
        self,
        prompt: str,
        schedule: Schedule,
        workspace: Path,
        created: datetime | None = None,
        kind: JobKind = "prompt",
        catch_up: CatchUp = "latest",
    ) -> Job:
        job = Job(
            uuid.uuid4().hex[:8],
            prompt,
            schedule,
            workspace,
            created or _now(),
            paused=False,
            kind=kind,
            catch_up=catch_up,
        )
        with self._write() as db:
            db.execute(
                "INSERT INTO jobs (id, prompt, schedule, workspace, created, kind, catch_up)"
                " VALUES (?,?,?,?,?,?,?)",
                (
                    job.id,
                    prompt,
                    json.dumps(schedule.to_json()),
                    str(workspace),
                    job.created.isoformat(),
                    kind,
                    catch_up,
                ),
            )
        return job

    def jobs(self) -> list[Job]:
        rows = self._conn.execute(
            "SELECT id, prompt, schedule, workspace, created, paused, kind, catch_up FROM jobs"
            " ORDER BY created"
        ).fetchall()
        return [
            Job(
                id_,
                prompt,
                Schedule.from_json(json.loads(schedule)),
                Path(workspace),
                datetime.fromisoformat(created),
                bool(paused),
                _job_kind(kind),
                _catch_up(catch_up),
            )
            for id_, prompt, schedule, workspace, created, paused, kind, catch_up in rows
        ]

    def job(self, job_id: str) -> Job | None:
        return next((j for j in self.jobs() if j.id == job_id), None)

    def set_paused(self, job_id: str, paused: bool) -> bool:
        with self._write() as db:
            changed = db.execute("UPDATE jobs SET paused=? WHERE id=?", (int(paused), job_id))
        return changed.rowcount == 1

    def remove(self, job_id: str) -> bool:
        """Forget the job; its runs and proposals stay (they are history)."""
        with self._write() as db:
            return db.execute("DELETE FROM jobs WHERE id=?", (job_id,)).rowcount == 1

    # --- runs ---------------------------------------------------------------------------

    def runs(self, job_id: str | None = None) -> list[Run]:
        query = "SELECT job_id, slot, fire, state, session_id, detail FROM runs"
        rows = self._conn.execute(
            query + (" WHERE job_id=?" if job_id else "") + " ORDER BY claimed",
            (job_id,) if job_id else (),
        ).fetchall()
        return [
            Run(j, slot, datetime.fromisoformat(fire), state, session, detail)
            for j, slot, fire, state, session, detail in rows
        ]

    def _slots(self, job_id: str) -> dict[str, datetime]:
        rows = self._conn.execute("SELECT slot, fire FROM runs WHERE job_id=?", (job_id,))
        return {slot: datetime.fromisoformat(fire) for slot, fire in rows}

    def next_due(self, job: Job, now: datetime | None = None) -> Due | None:
        """The job's next run by its schedule (due or not): after its last scheduled run,
        or its creation. Of fire times missed while nothing ran (a suspended laptop, no
        daemon) only the latest is kept: it runs once, the others never; a job whose
        catch-up policy is `skip` keeps none of them."""
        slots = self._slots(job.id)
        at = job.schedule.at
        if at is not None:  # one time: due at that moment until it has run
            slot = slot_of(at, job.schedule.zone)
            return None if slot in slots else Due(job, slot, at.astimezone(UTC))
        fires = [fire for slot, fire in slots.items() if not slot.startswith(RUN_NOW)]
        anchor = max([job.created, *fires])
        fire = job.schedule.next_fire(anchor)
        now = now or _now()
        for _ in range(MAX_CATCH_UP_STEPS):
            if fire is None:
                return None
            later = job.schedule.next_fire(fire)
            slot = slot_of(fire, job.schedule.zone)
            if slot in slots or (later is not None and later <= now):
                fire = later  # the same wall-clock slot again (clocks went back), or missed
                continue
            if job.catch_up == "skip" and fire < now - MISSED_AFTER:
                fire = later  # missed, and this job makes nothing up
                continue
            return Due(job, slot, fire)
        return None

    def due(self, now: datetime | None = None) -> tuple[list[Due], datetime | None]:
        """The runs due now, and when the next one after them falls due (None: never)."""
        now = now or _now()
        ready: list[Due] = []
        upcoming: list[Due] = []
        for job in self.jobs():
            if job.paused:
                continue
            due = self.next_due(job, now)
            if due is None:
                continue
            (ready if due.fire <= now else upcoming).append(due)
        soonest = min((d.fire for d in upcoming), default=None)
        return ready, soonest

    def claim(self, due: Due, pid: int | None = None) -> bool:
        """Take `due` for this process; False when some process already has (or had) it."""
        pid = pid or os.getpid()
        try:
            with self._write() as db:
                db.execute(
                    "INSERT INTO runs (job_id, slot, fire, claimed, state, pid, pid_start)"
                    " VALUES (?,?,?,?,?,?,?)",
                    (
                        due.job.id,
                        due.slot,
                        due.fire.isoformat(),
                        _now().isoformat(),
                        "running",
                        pid,
                        process_start_time(pid) or "",
                    ),
                )
        except sqlite3.IntegrityError:
            return False
        return True

    def run_now_slot(self) -> str:
        return f"{RUN_NOW}{_now().isoformat(timespec='microseconds')}"

    def started(self, job_id: str, slot: str, session_id: str) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE runs SET session_id=? WHERE job_id=? AND slot=?",
                (session_id, job_id, slot),
            )

    def finish(self, job_id: str, slot: str, state: RunState, detail: str = "") -> None:
        with self._write() as db:
            db.execute(
                "UPDATE runs SET state=?, finished=?, detail=? WHERE job_id=? AND slot=?",
                (state, _now().isoformat(), detail, job_id, slot),
            )

    def mark_interrupted(self, alive: Callable[[int, str], bool] = still_running) -> int:
        """Runs whose process is gone without finishing them: `interrupted`, never re-run.
        Returns how many."""
        rows = self._conn.execute(
            "SELECT job_id, slot, pid, pid_start FROM runs WHERE state='running'"
        ).fetchall()
        gone = [(job, slot) for job, slot, pid, start in rows if not alive(pid, start)]
        for job, slot in gone:
            self.finish(job, slot, "interrupted", "its process ended before the run finished")
        return len(gone)

    # --- proposals ----------------------------------------------------------------------

    def propose(self, proposal: Proposal) -> bool:
        """File what a run proposed; False when that call of that run is already filed."""
        seal, what = proposal.seal, proposal.what
        try:
            with self._write() as db:
                db.execute(
                    "INSERT INTO proposals (job_id, slot, position, workspace, session_id,"
                    " tool_call_id, tool_name, args, args_hash, reason, created, nonce, expires,"
                    " key_id, signature) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        what.job_id,
                        what.slot,
                        what.position,
                        what.workspace,
                        what.session_id,
                        what.tool_call_id,
                        what.tool_name,
                        json.dumps(proposal.args),
                        what.args_hash,
                        proposal.reason,
                        proposal.created.isoformat(),
                        seal.nonce,
                        seal.expires.isoformat(),
                        seal.key_id,
                        seal.signature,
                    ),
                )
        except sqlite3.IntegrityError:
            return False
        return True

    _PROPOSAL_COLUMNS = (
        "job_id, slot, position, workspace, session_id, tool_call_id, tool_name, args, args_hash,"
        " reason, created, nonce, expires, key_id, signature, state, detail"
    )

    @staticmethod
    def _proposal(row: tuple[object, ...]) -> Proposal:
        (
            job,
            slot,
            pos,
            workspace,
            session,
            call,
            tool,
            args,
            digest,
            reason,
            created,
            nonce,
            expires,
            key_id,
            signature,
            state,
            detail,
        ) = row
        seal = Seal(str(nonce), datetime.fromisoformat(str(expires)), str(key_id), str(signature))
        try:
            decoded = json.loads(str(args))
        except ValueError:
            decoded = {"_unreadable": str(args)}  # edited outside co-tui: its hash will not match
        what = Sealed(
            str(job),
            str(slot),
            int(str(pos)),
            str(workspace),
            str(session),
            str(call),
            str(tool),
            str(digest),
        )
        return Proposal(
            what,
            decoded if isinstance(decoded, dict) else {"_unreadable": decoded},
            str(reason),
            datetime.fromisoformat(str(created)),
            seal,
            _proposal_state(str(state)),
            str(detail),
        )

    def proposals(self, state: ProposalState | None = "waiting") -> list[Proposal]:
        query = f"SELECT {self._PROPOSAL_COLUMNS} FROM proposals"
        rows = self._conn.execute(
            query + (" WHERE state=?" if state else "") + " ORDER BY created, position",
            (state,) if state else (),
        ).fetchall()
        return [self._proposal(row) for row in rows]

    def proposal(self, short_id: str) -> Proposal | None:
        """The proposal whose nonce starts with `short_id` (None: none, or more than one)."""
        if len(short_id) < 6 or not short_id.isalnum():
            return None
        rows = self._conn.execute(
            f"SELECT {self._PROPOSAL_COLUMNS} FROM proposals WHERE nonce LIKE ?",
            (short_id.lower() + "%",),
        ).fetchall()
        return self._proposal(rows[0]) if len(rows) == 1 else None

    def past_expiry(self, now: datetime) -> list[Proposal]:
        """The waiting proposals whose seal expired before `now`."""
        return [p for p in self.proposals() if p.seal.expires <= now]

    def take(self, proposal: Proposal, state: ProposalState) -> bool:
        """Move a waiting proposal to `state`; False when it is not waiting any more."""
        with self._write() as db:
            changed = db.execute(
                "UPDATE proposals SET state=? WHERE nonce=? AND state='waiting'",
                (state, proposal.seal.nonce),
            )
        return changed.rowcount == 1

    def settle(self, proposal: Proposal, state: ProposalState, detail: str) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE proposals SET state=?, detail=? WHERE nonce=?",
                (state, detail, proposal.seal.nonce),
            )
