"""Time to first token of the embedded model: the first answer of a session and a follow-up.

    python evals/ttft_local.py SRC_A [SRC_B ...] [--rounds N]

Each SRC is a `src` folder holding a `co_tui` package (e.g. a checkout of the code before a
change, and this one). Rounds alternate between them, each in a fresh process with a fresh
llama.cpp server, so a busy shared machine slows every variant alike. Per turn it prints the
wall time from the turn's start to the first streamed answer text, and the CPU seconds the
server spent until then (/proc utime+stime: less sensitive to other load than wall time).
No provider may be configured (the embedded model must be the one chosen).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROMPTS = ("Name one colour of the sky.", "And what colour is fresh grass?")

_CHILD = r"""
import asyncio, json, os, sys, tempfile, time
from pathlib import Path

from co_tui.config.settings import Settings
from co_tui.llm.local.provider import server as local_server
from co_tui.protocol.recording import RecordingFrontend
from co_tui.session.chat import ChatSession


def server_cpu() -> float:
    endpoint = local_server.running_endpoint()
    fields = Path(f"/proc/{endpoint.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class FirstToken(RecordingFrontend):
    def __init__(self) -> None:
        super().__init__()
        self.first: tuple[float, float] | None = None
        self.approvals = 0

    def emit(self, event) -> None:
        if event.type == "text_delta" and self.first is None and event.content.strip():
            self.first = (time.monotonic(), server_cpu())
        super().emit(event)


async def main() -> None:
    prompts = json.loads(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        frontend = FirstToken()
        session = ChatSession(Settings(sandbox_backend="subprocess"), workspace=Path(tmp),
                              record=False, frontend=frontend)
        await session.start()
        out = []
        for prompt in prompts:
            frontend.first = None
            start, cpu = time.monotonic(), server_cpu()
            result = await session.run(prompt)
            first = frontend.first or (float("nan"), float("nan"))
            out.append({"wall": first[0] - start, "cpu": first[1] - cpu,
                        "answer": (result.output or "")[:80],
                        "approvals": len(frontend.approval_requests)})
        await session.aclose()
    local_server.shutdown()
    print(json.dumps(out))


asyncio.run(main())
"""


def run_once(src: Path) -> list[dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(src)
    with tempfile.TemporaryDirectory() as data:
        env["XDG_DATA_HOME"] = data  # the server log goes here, not to the user's data dir
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(PROMPTS)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    if proc.returncode != 0:
        raise SystemExit(f"{src}: failed:\n{proc.stderr[-2000:]}")
    return list(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("srcs", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runs: dict[Path, list[list[dict[str, object]]]] = {src: [] for src in args.srcs}
    for n in range(args.rounds):
        for src in args.srcs if n % 2 == 0 else reversed(args.srcs):
            turns = run_once(src)
            runs[src].append(turns)
            shown = "  ".join(f"{t['wall']:.2f}s/{t['cpu']:.2f}cpu" for t in turns)
            print(f"round {n + 1} {src}: {shown}  {[t['answer'] for t in turns]}", flush=True)
    print("\nmedian time to first token (wall s / server CPU s), per turn:")
    for src, rounds in runs.items():
        cells = []
        for i, name in enumerate(("first", "follow-up")):
            wall = statistics.median(float(r[i]["wall"]) for r in rounds)  # type: ignore[arg-type]
            cpu = statistics.median(float(r[i]["cpu"]) for r in rounds)  # type: ignore[arg-type]
            cells.append(f"{name} {wall:.2f} s / {cpu:.2f} cpu-s")
        print(f"  {src}: " + ", ".join(cells))


if __name__ == "__main__":
    main()
