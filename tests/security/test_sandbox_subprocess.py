"""The subprocess backend leaves nothing behind: every descendant of a command is killed
when it ends, also those that left its process group (setsid, nohup, a double fork), and
the call returns as soon as the command itself exits. Real processes, no mocks."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from co_tui.sandbox import SubprocessSandbox

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the reaper is Linux-only")

# The detached process writes its pid, then would touch `late` two seconds later.
LATER = "echo $$ > pid; sleep 2; touch late"
WAIT_FOR_PID = "while [ ! -s pid ]; do sleep 0.02; done"
DETACHED = {
    "setsid": f"setsid sh -c '{LATER}' &",
    "nohup": f"nohup setsid sh -c '{LATER}' > /dev/null 2>&1 &",
    "double fork": f"( ( sh -c '{LATER}' & ) & )",
    "double fork, new session": f"( setsid sh -c '{LATER}' & )",
}


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def assert_gone_for_good(workspace: Path) -> None:
    pid = int((workspace / "pid").read_text())
    assert not alive(pid), "the detached process still runs after the call returned"
    await asyncio.sleep(3)
    assert not (workspace / "late").exists()


@pytest.mark.slow
@pytest.mark.parametrize("how", list(DETACHED))
async def test_detached_descendants_are_killed_when_the_command_ends(
    tmp_path: Path, how: str
) -> None:
    result = await SubprocessSandbox(tmp_path).run_command(
        f"{DETACHED[how]}\n{WAIT_FOR_PID}; echo done", timeout=20
    )
    assert (result.output, result.exit_code, result.timed_out) == ("done\n", 0, False)
    assert not (tmp_path / "late").exists()  # returned without waiting for the sleep
    await assert_gone_for_good(tmp_path)


@pytest.mark.slow
async def test_a_timeout_kills_a_setsid_grandchild(tmp_path: Path) -> None:
    result = await SubprocessSandbox(tmp_path).run_command(
        f"(setsid sh -c '{LATER}' &); {WAIT_FOR_PID}; sleep 30", timeout=1
    )
    assert result.timed_out
    await assert_gone_for_good(tmp_path)


async def test_a_background_child_holding_stdout_does_not_hold_the_call(tmp_path: Path) -> None:
    result = await SubprocessSandbox(tmp_path).run_command("sleep 30 & echo started", timeout=20)
    assert not result.timed_out  # it would have at 20 s, waiting for the sleep
    assert (result.output, result.exit_code) == ("started\n", 0)


@pytest.mark.slow
async def test_cancelling_kills_the_command_and_what_it_detached(tmp_path: Path) -> None:
    task = asyncio.create_task(
        SubprocessSandbox(tmp_path).run_command(f"setsid sh -c '{LATER}' & sleep 30")
    )
    while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text():
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await assert_gone_for_good(tmp_path)  # gone once the cancellation returned


async def test_exit_codes_and_signals_come_back_unchanged(tmp_path: Path) -> None:
    sandbox = SubprocessSandbox(tmp_path)
    assert (await sandbox.run_command("exit 7")).exit_code == 7
    assert (await sandbox.run_command("kill -TERM $$")).exit_code == -15
    piped = await sandbox.run_command("yes | head -n 2", timeout=20)  # SIGPIPE is default again
    assert (piped.output, piped.exit_code, piped.timed_out) == ("y\ny\n", 0, False)
