"""Approving from the inbox runs exactly what was proposed, once; anything else is refused
with its reason: the same proposal again, one made to wait again, edited arguments, a
forged row, an expired one, one signed by a rotated key, one denied. Real files: the jobs
database, the key and the session store; the job's model is a local OpenAI-compatible
server."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from co_tui.protocol.frontend import args_hash
from co_tui.session.jobs.decide import Refused, approve, expire_waiting
from co_tui.store.inbox_seal import SigningKey
from co_tui.store.jobs_store import JobStore
from co_tui.store.session_store import SessionStore
from tests.cli_in_process import Ran, run_co_tui
from tests.jobs.helpers import propose_commands

pytestmark = pytest.mark.usefixtures("allow_model_requests")

COMMANDS = ["echo one >> ran.txt", "echo two >> ran.txt", "echo three >> ran.txt"]


def cli(args: list[str], cwd: Path) -> Ran:
    return run_co_tui(args, cwd, dict(os.environ))


def jobs_db() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "co-tui" / "jobs.db"


@pytest.fixture
async def proposed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A job's run that asked for the three commands: their inbox ids, in order."""
    return await propose_commands(tmp_path, COMMANDS, monkeypatch)


def ran(workspace: Path) -> list[str]:
    path = workspace / "ran.txt"
    return path.read_text().split() if path.exists() else []


def test_the_inbox_lists_each_proposal_with_its_id(tmp_path: Path, proposed: list[str]) -> None:
    listed = cli(["inbox"], tmp_path).stdout
    for short_id, command in zip(proposed, COMMANDS, strict=True):
        assert short_id in listed and command in listed
    rows = [json.loads(line) for line in cli(["inbox", "--json"], tmp_path).stdout.splitlines()]
    assert [r["args"]["cmd"] for r in rows] == COMMANDS
    assert all(r["args_sha256"] == args_hash(r["args"]) for r in rows)


def test_approving_runs_the_call_once_in_its_session(tmp_path: Path, proposed: list[str]) -> None:
    first = proposed[0]
    done = cli(["inbox", "approve", first], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "approved" in done.stdout
    assert ran(tmp_path) == ["one"]
    states = [p.state for p in JobStore(jobs_db()).proposals(state=None)]
    assert states == ["approved", "waiting", "waiting"]

    again = cli(["inbox", "approve", first], tmp_path)
    assert again.returncode == 1 and "refused: it was approved already" in again.stderr
    # made to wait again by a writer of the database: the used nonce still refuses it
    with sqlite3.connect(jobs_db()) as db:
        db.execute("UPDATE proposals SET state='waiting' WHERE nonce LIKE ?", (first + "%",))
    replayed = cli(["inbox", "approve", first], tmp_path)
    assert replayed.returncode == 1 and "nonce is used" in replayed.stderr
    assert ran(tmp_path) == ["one"]

    # The job's session holds the approval's turn: the call, its result, then a line.
    store = JobStore(jobs_db())
    (run,) = store.runs()
    assert run.session_id
    sessions = SessionStore()
    loaded = sessions.load(run.session_id)
    sessions.close()
    said = json.dumps([m.parts for m in loaded.messages], default=str)
    assert f"inbox-{first}" in said and "approved from the inbox" in said


def test_edited_or_forged_proposals_approve_nothing(tmp_path: Path, proposed: list[str]) -> None:
    first, second, third = proposed
    evil = {"cmd": "echo pwned >> ran.txt"}
    with sqlite3.connect(jobs_db()) as db:
        db.execute(
            "UPDATE proposals SET args=? WHERE nonce LIKE ?", (json.dumps(evil), second + "%")
        )
        # the hash recomputed too: the signature still covers the original one
        db.execute(
            "UPDATE proposals SET args=?, args_hash=? WHERE nonce LIKE ?",
            (json.dumps(evil), args_hash(evil), third + "%"),
        )
        cursor = db.execute("SELECT * FROM proposals WHERE nonce LIKE ?", (third + "%",))
        forged = dict(zip([c[0] for c in cursor.description], cursor.fetchone(), strict=True))
        # a row nobody signed: a new position and nonce, the first call's signature
        forged.update(position=99, nonce="f" * 32)
        names = ", ".join(forged)
        db.execute(
            f"INSERT INTO proposals ({names}) VALUES ({','.join('?' * len(forged))})",
            list(forged.values()),
        )
        # the first one moved to another folder, where the same command means something else
        db.execute("UPDATE proposals SET workspace='/' WHERE nonce LIKE ?", (first + "%",))
    edited = cli(["inbox", "approve", second], tmp_path)
    assert edited.returncode == 1 and "arguments were changed" in edited.stderr
    rehashed = cli(["inbox", "approve", third], tmp_path)
    assert rehashed.returncode == 1 and "signature does not match" in rehashed.stderr
    made_up = cli(["inbox", "approve", "f" * 10], tmp_path)
    assert made_up.returncode == 1 and "signature does not match" in made_up.stderr
    moved = cli(["inbox", "approve", first], tmp_path)
    assert moved.returncode == 1 and "signature does not match" in moved.stderr
    assert ran(tmp_path) == []


async def test_an_expired_proposal_is_refused(tmp_path: Path, proposed: list[str]) -> None:
    store = JobStore(jobs_db())
    later = datetime.now(UTC) + timedelta(days=4)
    with pytest.raises(Refused, match="it expired at"):
        await approve(store, SigningKey(), proposed[0], now=later)
    assert ran(tmp_path) == []


def test_a_rotated_key_voids_what_waits(tmp_path: Path, proposed: list[str]) -> None:
    rotated = cli(["inbox", "rotate-key"], tmp_path)
    assert rotated.returncode == 0 and "void" in rotated.stdout
    refused = cli(["inbox", "approve", proposed[0]], tmp_path)
    assert refused.returncode == 1 and "key that has been rotated" in refused.stderr
    assert ran(tmp_path) == []


def test_a_denied_proposal_can_never_run(tmp_path: Path, proposed: list[str]) -> None:
    denied = cli(["inbox", "deny", proposed[0]], tmp_path)
    assert denied.returncode == 0 and "denied" in denied.stdout
    late = cli(["inbox", "approve", proposed[0]], tmp_path)
    assert late.returncode == 1 and "denied already" in late.stderr
    unknown = cli(["inbox", "approve", "0123456789"], tmp_path)
    assert unknown.returncode == 1 and "no proposal 0123456789" in unknown.stderr
    assert ran(tmp_path) == []
    assert [p.seal.short_id for p in JobStore(jobs_db()).proposals()] == proposed[1:]
    # The job's session was told: resumed, its model reads the call as denied, not run.
    said = session_text(proposed[0])
    assert "From the inbox I denied run_shell_command" in said
    assert "The user denied this action" in said and "denied from the inbox" in said


def session_text(short_id: str) -> str:
    """The stored messages of the job's session, as text, from the decision's turn on."""
    store = JobStore(jobs_db())
    (run,) = store.runs()
    store.close()
    assert run.session_id
    sessions = SessionStore()
    loaded = sessions.load(run.session_id)
    sessions.close()
    said = json.dumps([m.parts for m in loaded.messages], default=str)
    assert f"inbox-{short_id}" in said
    return said[max(0, said.index(f"inbox-{short_id}") - 2000) :]


async def test_what_expires_waiting_is_marked_so_and_its_session_told(
    tmp_path: Path, proposed: list[str]
) -> None:
    store = JobStore(jobs_db())
    later = datetime.now(UTC) + timedelta(days=4)
    expired = await expire_waiting(store, now=later)
    assert [p.seal.short_id for p in expired] == proposed
    assert {p.state for p in store.proposals(state=None)} == {"expired"}
    assert await expire_waiting(store, now=later) == []  # once
    with pytest.raises(Refused, match="expired without a decision"):
        await approve(store, SigningKey(), proposed[0], now=later)
    store.close()
    assert ran(tmp_path) == []
    said = session_text(proposed[2])
    assert "expired in my inbox without a decision" in said
    assert "it expired in the inbox" in said
