"""No isolation: commands run on the host, in the workspace, with a scrubbed environment.

Every command still needs the user's approval (safe-prefix auto-approval is off for
isolation "none"), and read-only runs are refused: there is no read-only view here. Nothing
limits the network either: every command reaches whatever this machine reaches, so there is
no network to grant one command.

Nothing a command starts outlives it. On Linux the command runs under reaper.py, a child
subreaper: when the command's shell exits, every descendant is killed, those that left the
process group (setsid, nohup, a double fork) included, and the call returns at once even if
one of them held the output open. A timeout or a cancel sends SIGTERM to the reaper, which
kills everything; SIGKILL of the process group follows after a grace. Elsewhere (macOS) the
command's process group is killed instead: what left the group survives there. A cancelled
call returns only once the command is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

from co_tui.sandbox.base import (
    CommandResult,
    IsolationLevel,
    NetworkAccess,
    OutputCollector,
    OutputListener,
    SandboxError,
)

REAPER = Path(__file__).with_name("reaper.py")
# After the leader exited: how long children left behind may keep the output open.
DRAIN_GRACE_S = 0.5
# After SIGTERM to the reaper: how long it may take to kill everything.
KILL_GRACE_S = 2.0

# Variables a shell needs to behave; nothing else (no keys, tokens or credentials) passes.
PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME", "SHELL")


def restricted_env(workspace: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["PWD"] = str(workspace)
    env["TERM"] = "dumb"
    env["PAGER"] = "cat"
    env["GIT_PAGER"] = "cat"
    return env


def kill_process_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _stop(proc: asyncio.subprocess.Process, *, graceful: bool) -> None:
    """Time is up: SIGTERM the leader first when it cleans up after itself (the reaper)."""
    if graceful:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
            return
    kill_process_group(proc)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), 5)


async def run_in_process_group(
    argv: list[str],
    *,
    cwd: Path | None,
    env: dict[str, str] | None,
    timeout: float,
    output_limit: int,
    graceful: bool = False,
    on_output: OutputListener | None = None,
) -> CommandResult:
    """Run argv in a new session; collect capped output (told to `on_output` as it comes);
    on timeout or cancel kill the whole group, after SIGTERM to the leader and a grace when
    `graceful`."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        raise SandboxError(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
    collector = OutputCollector(output_limit, on_output)
    assert proc.stdout is not None

    async def pump() -> None:
        while chunk := await proc.stdout.read(65536):  # type: ignore[union-attr]
            collector.feed(chunk)

    pump_task = asyncio.create_task(pump())
    timed_out = False
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        timed_out = True
        await _stop(proc, graceful=graceful)
    except asyncio.CancelledError:
        pump_task.cancel()
        # Cancelled (Ctrl+C, SIGTERM, SIGHUP): co-tui may exit right after, so the command
        # is gone before the cancellation goes on, whatever else cancels meanwhile.
        stopping = asyncio.ensure_future(_stop(proc, graceful=graceful))
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(stopping)
        raise
    # The leader is gone. Children it left in the background may hold the pipe open:
    # drain briefly, then the whole group goes.
    try:
        await asyncio.wait_for(asyncio.shield(pump_task), DRAIN_GRACE_S)
    except TimeoutError:
        kill_process_group(proc)
        try:
            await asyncio.wait_for(pump_task, 5)
        except TimeoutError:
            pump_task.cancel()
    kill_process_group(proc)
    code = proc.returncode if proc.returncode is not None else -9
    return CommandResult(
        output=collector.text(),
        exit_code=code,
        timed_out=timed_out,
        truncated=collector.truncated,
    )


def shell_argv(cmd: str) -> list[str]:
    """The command under the reaper on Linux; a bare shell elsewhere."""
    if sys.platform == "linux":
        return [sys.executable, "-I", "-S", str(REAPER), str(os.getpid()), cmd]
    return ["/bin/sh", "-c", cmd]


class SubprocessSandbox:
    name = "subprocess"
    isolation_level: IsolationLevel = "none"
    network = NetworkAccess("host")

    def __init__(self, workspace: Path, output_limit: int = 100_000) -> None:
        self.workspace = workspace
        self.output_limit = output_limit

    async def run_command(
        self,
        cmd: str,
        timeout: float = 120,
        *,
        read_only: bool = False,
        network: bool = False,
        on_output: OutputListener | None = None,
    ) -> CommandResult:
        # `network`: every command has it already.
        if read_only:
            raise SandboxError("the subprocess backend has no read-only view of the workspace")
        return await run_in_process_group(
            shell_argv(cmd),
            cwd=self.workspace,
            env=restricted_env(self.workspace),
            timeout=timeout,
            output_limit=self.output_limit,
            graceful=sys.platform == "linux",
            on_output=on_output,
        )

    async def cleanup(self) -> None:
        return None

    async def switch_session(self, session_id: str) -> None:
        return None  # nothing is named after the session
