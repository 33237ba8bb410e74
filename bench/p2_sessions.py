"""P2: session persistence cost.

1. Appending a turn (user prompt, tool call, tool return, answer) to a stored session at
   turn 500 against at turn 10: the median save time, 100 appends each. Goal <= 1.2x.
2. Opening a 500-turn session against a 10-turn session in the app (headless run_test,
   --resume): the time until the first frame, and until the restored transcript is mounted
   and the history is back. Goal <= 2x.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.store.session_store import SessionStore

APPENDS = 100
OPENS = 5


def turn(n: int) -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart(content=f"Question {n}: " + "please look " * 20)]),
        ModelResponse(parts=[ToolCallPart("search", {"q": f"thing {n}"}, f"call-{n}")]),
        ModelRequest(parts=[ToolReturnPart("search", "result line\n" * 150, f"call-{n}")]),
        ModelResponse(parts=[TextPart(content=f"Answer {n}. " + "Some prose here. " * 40)]),
    ]


def history_of(turns: int) -> list[ModelMessage]:
    return [m for n in range(turns) for m in turn(n)]


def append_cost(db: Path, start_turns: int) -> float:
    """Median seconds to save one more turn, from `start_turns` on (a warm store)."""
    store = SessionStore(db)
    history = history_of(start_turns)
    store.save("s", history)
    times = []
    for n in range(start_turns, start_turns + APPENDS):
        history = [*history, *turn(n)]
        t0 = time.perf_counter()
        store.save("s", history)
        times.append(time.perf_counter() - t0)
    store.close()
    return statistics.median(times)


async def open_cost(db: Path, workspace: Path, turns: int) -> tuple[float, float]:
    """(seconds to the first frame, seconds until the transcript and history are restored)."""
    from pydantic_ai.models.function import FunctionModel

    from co_tui.agent.build import build_agent
    from co_tui.config.settings import Settings
    from co_tui.context.deps import create_deps
    from co_tui.sandbox import SandboxChoice, SubprocessSandbox
    from co_tui.tui.app import CoApp

    store = SessionStore(db)
    sid = f"session-{turns}"
    store.save(sid, history_of(turns), title=f"{turns} turns", cwd=str(workspace))
    store.close()

    async def never(messages, info):  # type: ignore[no-untyped-def]
        yield "unused"

    settings = Settings()
    bundle = build_agent(settings, model=FunctionModel(stream_function=never), instructions="t")
    choice = SandboxChoice(SubprocessSandbox(workspace), "bench")
    deps = create_deps(settings, workspace, sandbox_choice=choice)
    t0 = time.perf_counter()
    app = CoApp(
        settings,
        bundle=bundle,
        deps=deps,
        history_path=None,
        session_store=SessionStore(db),
        resume=sid,
    )
    first_frame = 0.0
    async with app.run_test(size=(100, 30)) as pilot:
        first_frame = time.perf_counter() - t0
        while len(app.session.history) != turns * 4 or not app.chat.transcript.items:
            await pilot.pause(0.001)
        await pilot.pause()
        restored = time.perf_counter() - t0
    return first_frame, restored


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        small = append_cost(root / "a.db", 10)
        large = append_cost(root / "b.db", 500)
        print(
            f"P2 append a turn: at turn 10 {small * 1000:.2f} ms, at turn 500 "
            f"{large * 1000:.2f} ms, ratio {large / small:.2f}x (goal <= 1.2x)"
        )

        results: dict[int, list[tuple[float, float]]] = {10: [], 500: []}
        for _ in range(OPENS):
            for turns in (10, 500):
                db = root / f"open-{turns}.db"
                db.unlink(missing_ok=True)
                results[turns].append(asyncio.run(open_cost(db, root, turns)))
        med = {
            t: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
            for t, v in results.items()
        }
        (f10, r10), (f500, r500) = med[10], med[500]
        print(
            f"P2 open to first frame: 10 turns {f10 * 1000:.0f} ms, 500 turns "
            f"{f500 * 1000:.0f} ms, ratio {f500 / f10:.2f}x (goal <= 2x)"
        )
        print(
            f"P2 open until the transcript is restored: 10 turns {r10 * 1000:.0f} ms, "
            f"500 turns {r500 * 1000:.0f} ms, ratio {r500 / r10:.2f}x (goal <= 2x)"
        )


if __name__ == "__main__":
    main()
