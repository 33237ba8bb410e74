"""P6: telemetry cost and the span database. Prints figures and ratios; asserts nothing.

Goals: a turn with telemetry <= 1.05x the same turn without; a 10,000-span burst drops 0
spans; the viewer's newest-200 and one-trace queries on 100,000 spans <= 1/100 of the same
queries without the indexes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

TURNS = 40
BURST = 10_000
DB_SPANS = 100_000
SPANS_PER_TRACE = 10
QUERY_RUNS = 5


# -- 1. a turn with and without telemetry ------------------------------------------------
def _model() -> Any:
    from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(
            isinstance(p, ToolReturnPart) for p in last.parts
        ):
            for word in ("The ", "command ", "said ", "hello."):
                yield word
            return
        yield "Let me run it. "
        yield {
            1: DeltaToolCall(
                name="run_shell_command",
                json_args='{"cmd": "echo hello"}',
                tool_call_id=f"c-{uuid.uuid4().hex[:8]}",
            )
        }

    return FunctionModel(stream_function=stream, model_name="bench")


async def _turn_overhead(tmp: Path) -> tuple[float, float, float, int]:
    """Turns alternate without and with telemetry (same session, same sandbox), so machine
    load hits both alike; each starts a fresh conversation. The export runs in the background
    after a turn: its cost is measured apart (the flush at shutdown), not as turn latency."""
    from co_tui.agent.build import build_agent
    from co_tui.config.settings import Settings
    from co_tui.context.deps import create_deps
    from co_tui.protocol.recording import RecordingFrontend
    from co_tui.sandbox import SandboxChoice, SubprocessSandbox
    from co_tui.session.chat import ChatSession
    from co_tui.telemetry import setup_telemetry, shutdown_telemetry

    settings = Settings(auto_confirm=True)  # approvals granted without a frontend round trip
    choice = SandboxChoice(SubprocessSandbox(tmp), "bench")
    session = ChatSession(
        settings,
        frontend=RecordingFrontend(),
        record=False,
        bundle=build_agent(settings, model=_model(), instructions="bench"),
        deps=create_deps(settings, tmp, sandbox_choice=choice),
    )
    session.build()
    db = tmp / "turns.db"

    async def turn() -> float:
        await session.replace_history([])  # every turn starts a new conversation
        started = time.perf_counter()
        result = await session.run("say hello")
        if not result.ok:
            raise RuntimeError(result.error)
        return time.perf_counter() - started

    plain: list[float] = []
    traced: list[float] = []
    export: list[float] = []
    for _ in range(3):  # warm imports and caches, both ways
        await turn()
        setup_telemetry(settings, db)
        await turn()
        shutdown_telemetry()
    for _ in range(TURNS):
        plain.append(await turn())
        telemetry = setup_telemetry(settings, db)
        assert telemetry is not None
        traced.append(await turn())
        started = time.perf_counter()
        telemetry.flush()
        export.append(time.perf_counter() - started)
        shutdown_telemetry()
    await session.aclose()
    spans = sqlite3.connect(db).execute("SELECT count(*) FROM spans").fetchone()[0]
    median = statistics.median
    return median(plain), median(traced), median(export), spans


# -- 2. a burst of spans -----------------------------------------------------------------
def _burst(tmp: Path, max_queue_size: int | None) -> tuple[int, float]:
    from co_tui.config.settings import Settings
    from co_tui.telemetry import create_telemetry

    db = tmp / f"burst-{max_queue_size}.db"
    kwargs = {"max_queue_size": max_queue_size} if max_queue_size else {}
    telemetry = create_telemetry(Settings(), db, **kwargs)
    started = time.perf_counter()
    tracer = telemetry.tracer
    for i in range(BURST):
        with tracer.start_as_current_span("burst", attributes={"i": i, "gen_ai.tool.name": "x"}):
            pass
    telemetry.provider.shutdown()  # flushes what the queue kept
    elapsed = time.perf_counter() - started
    rows = sqlite3.connect(db).execute("SELECT count(*) FROM spans").fetchone()[0]
    return rows, elapsed


# -- 3. the viewer's queries on 100,000 spans, with and without indexes -------------------
SPAN_NAMES = [
    "turn",
    "invoke_agent co",
    "chat gemini-2.5-flash",
    "execute_tool run_shell_command",
    "sandbox_command",
]
SPAN_ATTRIBUTES = {
    "gen_ai.request.model": "gemini-2.5-flash",
    "gen_ai.usage.input_tokens": 800,
    "gen_ai.usage.output_tokens": 60,
    "gen_ai.tool.call.arguments": '{"cmd": "ls"}',
    "co.session_id": "s" * 36,
}


def _span_row(trace_id: str, name: str, start: int) -> tuple[Any, ...]:
    """One row of the spans table: a 0.5 ms span."""
    span_id = uuid.uuid4().hex[:16]
    timing = (start, start + 500_000, 0.5)
    attributes = (json.dumps(SPAN_ATTRIBUTES), "[]", '{"service.name": "co-tui"}')
    return (span_id, trace_id, None, name, "INTERNAL", *timing, "UNSET", None, *attributes)


def _fill(db: Path) -> str:
    from co_tui.telemetry.exporter import INSERT
    from co_tui.telemetry.store import open_for_writing

    conn = open_for_writing(db)
    base = time.time_ns() - DB_SPANS * 1_000_000
    rows = []
    trace_id = ""
    for i in range(DB_SPANS):
        if i % SPANS_PER_TRACE == 0:
            trace_id = uuid.uuid4().hex
        name = SPAN_NAMES[i % len(SPAN_NAMES)]
        rows.append(_span_row(trace_id, name, base + i * 1_000_000))
    with conn:
        conn.executemany(INSERT, rows)
    conn.close()
    return trace_id


def _time_query(db: Path, fn: Any) -> float:
    from co_tui.telemetry.store import open_for_reading

    conn = open_for_reading(db)
    assert conn is not None
    fn(conn)  # page cache
    runs = []
    for _ in range(QUERY_RUNS):
        started = time.perf_counter()
        fn(conn)
        runs.append(time.perf_counter() - started)
    conn.close()
    return statistics.median(runs)


def _queries(tmp: Path) -> dict[str, tuple[float, float]]:
    from co_tui.telemetry.queries import recent_spans, trace_spans

    indexed = tmp / "indexed.db"
    trace_id = _fill(indexed)
    bare = tmp / "bare.db"
    shutil.copy(indexed, bare)
    conn = sqlite3.connect(bare)
    conn.execute("DROP INDEX idx_spans_start_time")
    conn.execute("DROP INDEX idx_spans_trace_id")
    conn.commit()
    conn.close()
    out = {}
    for label, fn in (
        ("newest 200", lambda c: recent_spans(c, 200)),
        ("one trace", lambda c: trace_spans(c, trace_id)),
    ):
        with_index = _time_query(indexed, fn)
        without = _time_query(bare, fn)
        assert len(fn(sqlite3.connect(indexed))) == (200 if label == "newest 200" else 10)
        out[label] = (with_index, without)
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def main() -> None:
    print("P6 telemetry")
    tmp = Path(tempfile.mkdtemp(prefix="co-tui-p6-"))
    old_data = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(tmp / "xdg")  # never touch the real span database
    try:
        plain, traced, export, spans = asyncio.run(_turn_overhead(tmp))
        ratio = traced / plain
        verdict = "ok" if ratio <= 1.05 else "over goal"
        print(
            f"  turn (shell call + answer), median of {TURNS} alternating: "
            f"without {_ms(plain)}, with telemetry {_ms(traced)} -> {ratio:.3f}x "
            f"(goal <= 1.05x: {verdict})"
        )
        print(
            f"  flush of one turn's {spans // (TURNS + 3)} spans (redact + SQLite, in the "
            f"exporter thread, off the turn's path): {_ms(export)}"
        )

        rows, elapsed = _burst(tmp, None)
        print(
            f"  burst of {BURST:,} spans: {rows:,} stored, {BURST - rows:,} dropped "
            f"({BURST / elapsed:,.0f} spans/s; goal 0 dropped)"
        )
        logging.getLogger("opentelemetry").setLevel(logging.ERROR)  # "Queue full" per span
        rows_default, _ = _burst(tmp, 2048)
        print(
            f"  same burst with the SDK's default queue (2,048): {BURST - rows_default:,} dropped"
        )

        for label, (with_index, without) in _queries(tmp).items():
            ratio = with_index / without
            verdict = "ok" if ratio <= 0.01 else "over goal"
            print(
                f"  {label} of {DB_SPANS:,} spans: indexed {_ms(with_index)}, "
                f"no index {_ms(without)} -> 1/{without / with_index:,.0f} "
                f"(goal <= 1/100: {verdict})"
            )
    finally:
        if old_data is None:
            os.environ.pop("XDG_DATA_HOME", None)
        else:
            os.environ["XDG_DATA_HOME"] = old_data
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
