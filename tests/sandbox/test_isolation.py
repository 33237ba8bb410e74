"""Every isolating backend (Docker, bubblewrap) against the same hostile commands."""

from __future__ import annotations

import asyncio
from pathlib import Path

from co_tui.sandbox.base import SandboxProtocol
from tests.sandbox.conftest import reach_script, sandbox_uid

FORK_BOMB = "f() { f | f & }; f"


async def test_runs_as_the_user_without_capabilities(sandbox: SandboxProtocol) -> None:
    result = await sandbox.run_command(
        "id -u; id -G; grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status"
    )
    lines = result.output.splitlines()
    assert lines[0] == str(sandbox_uid()), result.output
    assert "0" not in lines[1].split(), f"root's group: {result.output}"
    caps = dict(line.split(":\t") for line in lines[2:])
    assert caps == {"CapPrm": "0" * 16, "CapEff": "0" * 16, "CapBnd": "0" * 16}


async def test_fork_bomb_is_contained_and_the_next_command_works(
    sandbox: SandboxProtocol,
) -> None:
    result = await sandbox.run_command(FORK_BOMB, timeout=20)
    assert not result.timed_out  # the pids limit stopped it; its leftovers were killed
    after = await sandbox.run_command("echo still here; ps -e --no-headers | wc -l", timeout=20)
    lines = after.output.split()
    assert lines[:2] == ["still", "here"], after.output
    assert int(lines[2]) < 10, f"bomb processes survived: {after.output}"


async def test_memory_hog_is_killed_and_reported(sandbox: SandboxProtocol) -> None:
    # 600 MB against the fixture's 256m limit.
    hog = "python3 -c \"x = b'a' * (600 << 20); print('survived')\""
    result = await sandbox.run_command(hog, timeout=60)
    assert "survived" not in result.output
    assert result.exit_code != 0
    assert result.killed_reason and "out of memory" in result.killed_reason
    assert "killed: out of memory" in result.for_model(60)
    assert (await sandbox.run_command("echo ok")).output == "ok\n"


async def test_no_network_egress(sandbox: SandboxProtocol, host_listener: int) -> None:
    import socket as host_socket

    with host_socket.create_connection(("127.0.0.1", host_listener), timeout=2):
        pass  # the listener does answer from the host
    script = reach_script(host_listener)
    result = await sandbox.run_command(f"python3 -c {_quote(script)}; cat /proc/net/dev")
    assert "reached []" in result.output, result.output
    interfaces = [line.split(":")[0].strip() for line in result.output.splitlines() if ":" in line]
    assert [i for i in interfaces if i and not i.startswith("reached")] == ["lo"]


async def test_writes_outside_the_workspace_fail(sandbox: SandboxProtocol, workspace: Path) -> None:
    result = await sandbox.run_command(
        "for f in /etc/x /usr/x /x /bin/x /var/x; do touch $f 2>/dev/null && echo WROTE $f; done;"
        " echo inside > /workspace/inside.txt; echo scratch > /tmp/scratch && echo tmp ok"
    )
    assert "WROTE" not in result.output
    assert "tmp ok" in result.output
    assert (workspace / "inside.txt").read_text() == "inside\n"


async def test_timeout_kills_the_command_and_its_children(
    sandbox: SandboxProtocol, workspace: Path
) -> None:
    cmd = "(while :; do date +%s%N > /workspace/beat; sleep 0.1; done) & sleep 60"
    result = await sandbox.run_command(cmd, timeout=2)
    assert result.timed_out
    assert "timed out after 2s; the command and its children were killed" in result.for_model(2)
    beat = (workspace / "beat").read_text()
    await asyncio.sleep(0.6)
    assert (workspace / "beat").read_text() == beat, "the background child still runs"


async def test_binary_output_is_handled(sandbox: SandboxProtocol) -> None:
    result = await sandbox.run_command(
        r"printf 'abc\377\376\000def\200'; head -c 4096 /dev/urandom"
    )
    assert result.exit_code == 0
    assert result.output.startswith("abc\ufffd\ufffd")
    assert "\x00" not in result.output
    assert "def" in result.output


async def test_50_mb_output_is_capped(sandbox: SandboxProtocol) -> None:
    result = await sandbox.run_command("head -c 50000000 /dev/zero | tr '\\0' a; echo; echo end")
    assert result.exit_code == 0
    assert result.truncated
    assert len(result.output) < 101_000
    assert result.output.startswith("a" * 1000)
    assert "more bytes not shown" in result.output
    assert "output truncated" in result.for_model(120)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)
