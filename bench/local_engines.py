"""The embedded model's engines side by side on the same turns (docs/local-model.md#engines).

    python -m bench.local_engines [--rounds N] [--engines xllamacpp,llama-cpp-python]

Each round runs, per engine, a fresh process with a fresh server: the server's start until it
answers, then three turns of a real ChatSession (a first answer, a follow-up, and a request
that shortlists tools, so the model's choice and its arguments run too). Per turn it prints the
wall time to the first streamed answer text (or to the end of a turn that shows none) and
the server's CPU seconds; at the end, the server's peak resident memory. Engines alternate in
order from round to round, so a busy machine slows each alike. An engine that is not installed
is named and left out. Ratios are against the first engine listed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import TypedDict

from co_tui.llm.local.engines import ENGINES, EngineName

PROMPTS = (
    "Name one colour of the sky.",
    "And what colour is fresh grass?",
    "List the files in this folder.",
)

_CHILD = r"""
import asyncio, json, os, sys, tempfile, time
from pathlib import Path

from co_tui.config.settings import Settings
from co_tui.llm.local import server as local_server
from co_tui.llm.local.provider import local_spec
from co_tui.protocol.recording import RecordingFrontend
from co_tui.session.chat import ChatSession


def server_pid() -> int:
    endpoint = local_server.running_endpoint()
    assert endpoint is not None
    return endpoint.pid


def server_cpu() -> float:
    fields = Path(f"/proc/{server_pid()}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb() -> float:
    for line in Path(f"/proc/{server_pid()}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class FirstText(RecordingFrontend):
    def __init__(self) -> None:
        super().__init__()
        self.first: tuple[float, float] | None = None

    def emit(self, event) -> None:
        if event.type == "text_delta" and self.first is None and event.content.strip():
            self.first = (time.monotonic(), server_cpu())
        super().emit(event)


async def main() -> None:
    prompts = json.loads(sys.argv[1])
    settings = Settings(sandbox_backend="subprocess")
    started = time.monotonic()
    await local_server.ensure_started(local_spec(settings))
    ready_s = time.monotonic() - started
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "notes.txt").write_text("hello")
        frontend = FirstText()
        session = ChatSession(settings, workspace=Path(tmp), record=False, frontend=frontend)
        await session.start()
        turns = []
        for prompt in prompts:
            frontend.first = None
            start, cpu = time.monotonic(), server_cpu()
            result = await session.run(prompt)
            first = frontend.first or (time.monotonic(), server_cpu())
            turns.append({"wall": first[0] - start, "cpu": first[1] - cpu,
                          "answer": (result.output or "")[:60]})
        await session.aclose()
    out = {"ready": ready_s, "peak_mb": peak_rss_mb(), "turns": turns}
    local_server.shutdown()
    print(json.dumps(out))


asyncio.run(main())
"""

TURN_NAMES = ("first answer", "follow-up", "tool request")


class Turn(TypedDict):
    wall: float
    cpu: float
    answer: str


class Run(TypedDict):
    ready: float
    peak_mb: float
    turns: list[Turn]


def run_once(engine: str) -> Run:
    env = dict(os.environ, CO_TUI_LOCAL_ENGINE=engine)
    with tempfile.TemporaryDirectory() as data:
        env["XDG_DATA_HOME"] = data  # the server log goes here, not to the user's data dir
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(PROMPTS)],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    if proc.returncode != 0:
        raise SystemExit(f"{engine}: failed:\n{proc.stderr[-2000:]}")
    run: Run = json.loads(proc.stdout.strip().splitlines()[-1])
    return run


def _cell(rounds: list[Run], base: list[Run], pick: Callable[[Run], float], form: str) -> str:
    value = statistics.median(pick(run) for run in rounds)
    ratio = value / statistics.median(pick(run) for run in base)
    return f"{value:{form}} ({ratio:.2f}x)"


def _turn_wall(turn: int) -> Callable[[Run], float]:
    return lambda run: run["turns"][turn]["wall"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engines", default=",".join(ENGINES))
    args = parser.parse_args()
    engines: list[EngineName] = []
    for engine in ENGINES.values():
        if engine.name not in args.engines.split(","):
            continue
        missing = engine.missing_modules()
        if missing:
            print(f"{engine.name}: not installed (missing {', '.join(missing)}), left out")
        else:
            engines.append(engine.name)
    if not engines:
        return
    runs: dict[EngineName, list[Run]] = {name: [] for name in engines}
    for n in range(args.rounds):
        for name in engines if n % 2 == 0 else list(reversed(engines)):
            run = run_once(name)
            runs[name].append(run)
            shown = "  ".join(f"{t['wall']:.2f}s/{t['cpu']:.2f}cpu" for t in run["turns"])
            answers = [t["answer"] for t in run["turns"]]
            print(f"round {n + 1} {name}: ready {run['ready']:.2f}s  {shown}  {answers}")
    base = runs[engines[0]]
    print(f"\nmedians of {args.rounds} rounds; wall s (ratio against {engines[0]})")
    head = ["engine", "ready s", *(f"{t} s" for t in TURN_NAMES), "its server CPU s", "peak MB"]
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    for name, rounds in runs.items():
        cells = [name, _cell(rounds, base, lambda r: r["ready"], ".2f")]
        for i in range(len(TURN_NAMES)):
            cells.append(_cell(rounds, base, _turn_wall(i), ".2f"))
        cpu = statistics.median(sum(t["cpu"] for t in r["turns"]) for r in rounds)
        cells.append(f"{cpu:.2f}")
        cells.append(_cell(rounds, base, lambda r: r["peak_mb"], ".0f"))
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
