"""P4: sandbox command latency. Docker cold (container start) against warm (exec into the
running container), and Docker warm against bubblewrap. Prints ratios; asserts nothing.

Goals: warm >= 5x faster than cold; Docker warm <= 2x bubblewrap.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

WARM_RUNS = 10
COMMAND = "echo ok"


async def _time(sandbox: object, cmd: str = COMMAND) -> float:
    started = time.perf_counter()
    result = await sandbox.run_command(cmd, timeout=60)  # type: ignore[attr-defined]
    elapsed = time.perf_counter() - started
    if result.output != "ok\n":
        raise RuntimeError(f"{sandbox!r} answered {result.output!r}")
    return elapsed


async def _docker(workspace: Path) -> tuple[float, list[float]] | str:
    from co_tui.sandbox.docker import DockerSandbox
    from co_tui.sandbox.select import probe_docker

    image = os.environ.get("CO_TUI_DOCKER_IMAGE", "co-tui-sandbox")
    client, why = probe_docker(image)
    if client is None:
        return why or "Docker unavailable"
    box = DockerSandbox(workspace, session_id=str(uuid.uuid4()), client=client, image=image)
    try:
        cold = await _time(box)
        warm = [await _time(box) for _ in range(WARM_RUNS)]
    finally:
        await box.cleanup()
        client.close()
    return cold, warm


async def _bwrap(workspace: Path) -> list[float] | str:
    from co_tui.sandbox.bwrap import BwrapSandbox, probe

    if why := probe(workspace):
        return why
    box = BwrapSandbox(workspace)
    await _time(box)  # page cache, first exec
    return [await _time(box) for _ in range(WARM_RUNS)]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def _run() -> None:
    workspace = Path(tempfile.mkdtemp(prefix="co-bench-ws-", dir="/tmp"))
    workspace.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(workspace, 1000, 1000)  # the sandbox user must be able to write it
    try:
        docker = await _docker(workspace)
        bwrap = await _bwrap(workspace)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)

    print(f"P4 sandbox latency (`{COMMAND}`, median of {WARM_RUNS} warm runs)")
    docker_warm: float | None = None
    if isinstance(docker, str):
        print(f"  docker: skipped ({docker})")
    else:
        cold, warm = docker
        docker_warm = statistics.median(warm)
        ratio = cold / docker_warm
        print(f"  docker cold (container start + first command): {_ms(cold)}")
        print(f"  docker warm (exec in the running container):   {_ms(docker_warm)}")
        print(f"  cold / warm = {ratio:.1f}x  (goal >= 5x: {'met' if ratio >= 5 else 'NOT met'})")
    if isinstance(bwrap, str):
        print(f"  bwrap: skipped ({bwrap})")
    else:
        bwrap_warm = statistics.median(bwrap)
        print(f"  bwrap:                                          {_ms(bwrap_warm)}")
        if docker_warm is not None:
            ratio = docker_warm / bwrap_warm
            verdict = "met" if ratio <= 2 else "NOT met"
            print(f"  docker warm / bwrap = {ratio:.2f}x  (goal <= 2x: {verdict})")


def main() -> None:
    asyncio.run(_run())


if __name__ == "__main__":
    main()
