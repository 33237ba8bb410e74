"""P1: streaming cost. 20,000 small chunks from a FunctionModel through a turn, into the
app (headless run_test) and into a bare ChatSession (its NullFrontend). Prints the ratio
app/null, the growth from 2,000 to 20,000 chunks, and the worst event-loop stall in the app
(a 10 ms ticker's largest gap). Goals: ratio <= 1.3, growth <= 10.5x, stall <= 33 ms.

Each figure is taken RUNS times (min / median / max), the app and the null frontend one after
the other in each run: on a shared machine one pair can be 40% off the next.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui.agent.build import AgentBundle, build_agent
from co_tui.config.settings import Settings
from co_tui.context.deps import CoDeps, create_deps
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.session.chat import ChatSession
from co_tui.tui.app import CoApp
from co_tui.tui.messages import Settle
from co_tui.tui.shell.turns import TURN_GROUP

CHUNK = 4
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
SAMPLE = (
    "## Section\n\nSome text with **bold** and `code` in a paragraph that runs on for a "
    "while, as answers do.\n\n- a list item\n- another item with *emphasis*\n\n"
    "```python\ndef f(x):\n    return x * 2\n```\n\n1. first\n2. second\n\n"
)


def chunks(n: int) -> list[str]:
    text = SAMPLE * (n * CHUNK // len(SAMPLE) + 1)
    return [text[i * CHUNK : (i + 1) * CHUNK] for i in range(n)]


def stream_fn(parts: list[str]):  # type: ignore[no-untyped-def]
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for part in parts:
            yield part
            await asyncio.sleep(0)  # a network stream yields to the loop between chunks

    return fn


class Ticker:
    """A 10 ms ticker; its largest gap is the worst stall of the event loop."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last - 0.01)
            last = now

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        if self._task:
            self._task.cancel()


def _setup(n: int, workspace: Path) -> tuple[Settings, AgentBundle, CoDeps]:
    settings = Settings()
    model = FunctionModel(stream_function=stream_fn(chunks(n)), model_name="bench")
    bundle = build_agent(settings, model=model, instructions="bench")
    choice = SandboxChoice(SubprocessSandbox(workspace), "bench")
    deps = create_deps(settings, workspace, sandbox_choice=choice)
    return settings, bundle, deps


async def run_null(n: int, workspace: Path) -> float:
    settings, bundle, deps = _setup(n, workspace)
    session = ChatSession(settings, record=False, bundle=bundle, deps=deps)
    session.build()
    started = time.perf_counter()
    result = await session.run("go")
    elapsed = time.perf_counter() - started
    await session.aclose()
    assert result.ok, result.error
    return elapsed


async def run_app(n: int, workspace: Path) -> tuple[float, float]:
    settings, bundle, deps = _setup(n, workspace)
    app = CoApp(settings, bundle=bundle, deps=deps, history_path=None)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await app.wait_ready()
        await pilot.pause()
        ticker = Ticker()
        ticker.start()
        started = time.perf_counter()
        app.chat.dispatch("go")  # the chat screen asks the app to start the turn
        while not app.turn_running:
            await asyncio.sleep(0)
        (turn,) = [w for w in app.workers if w.group == TURN_GROUP and not w.is_finished]
        await turn.wait()
        drawn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        app.chat.transcript.post_message(Settle(drawn))  # after every event of the turn
        await drawn
        for message in app.query("AssistantMessage").results():
            await message.wait_settled()  # type: ignore[attr-defined]
        await pilot.pause()
        elapsed = time.perf_counter() - started
        ticker.stop()
        assert app.session.history, "the turn did not finish"
    return elapsed, ticker.worst


async def _main() -> None:
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        await run_null(500, ws)  # warm-up: imports, first-run caches
        await run_app(500, ws)
        for _ in range(RUNS):
            null_small, null_big = await run_null(2_000, ws), await run_null(20_000, ws)
            (app_small, _), (app_big, stall) = await run_app(2_000, ws), await run_app(20_000, ws)
            runs.append(
                {
                    "null_small": null_small,
                    "null_big": null_big,
                    "app_small": app_small,
                    "app_big": app_big,
                    "ratio": app_big / null_big,
                    "growth": app_big / app_small,
                    "stall_ms": stall * 1000,
                }
            )

    def spread(key: str, digits: int = 2) -> str:
        values = sorted(run[key] for run in runs)
        low, mid, high = values[0], statistics.median(values), values[-1]
        return f"{low:.{digits}f} / {mid:.{digits}f} / {high:.{digits}f}"

    print(f"P1 stream (20,000 chunks of 4 chars), {RUNS} runs: min / median / max")
    print(f"  null frontend: 2k {spread('null_small')} s   20k {spread('null_big')} s")
    print(f"  app          : 2k {spread('app_small')} s   20k {spread('app_big')} s")
    print(f"  ratio app/null     {spread('ratio')}   (goal <= 1.3)")
    print(f"  growth 2k -> 20k   {spread('growth', 1)}   (goal <= 10.5x)")
    print(f"  worst stall        {spread('stall_ms', 0)} ms   (goal <= 33 ms)")


def main() -> None:
    asyncio.run(_main())


if __name__ == "__main__":
    main()
