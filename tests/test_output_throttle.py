"""co-tui -p's stream-json holds a tool call's `tool_output` back to ~10 a second: the
latest lines go out when the interval is over, and before any other event."""

from __future__ import annotations

import asyncio

from co_tui.headless.output_throttle import MIN_INTERVAL_S, ToolOutputThrottle
from co_tui.protocol import events as ev


def output(call: str, last: str) -> ev.ToolOutput:
    return ev.ToolOutput(session_id="s", tool_call_id=call, lines=(last,))


def shown(written: list[ev.TurnEvent]) -> list[str]:
    return [e.lines[-1] if isinstance(e, ev.ToolOutput) else e.type for e in written]


async def test_a_burst_sends_the_first_then_the_latest_once_the_interval_is_over() -> None:
    written: list[ev.TurnEvent] = []
    throttle = ToolOutputThrottle(written.append, clock=lambda: 0.0)  # time stands still
    for n in range(1, 1001):
        throttle.emit(output("a", f"line {n}"))
    throttle.emit(output("b", "other call"))  # its own interval
    assert shown(written) == ["line 1", "other call"]
    await asyncio.sleep(MIN_INTERVAL_S * 2)
    assert shown(written) == ["line 1", "other call", "line 1000"]


async def test_the_result_never_overtakes_the_last_lines() -> None:
    written: list[ev.TurnEvent] = []
    throttle = ToolOutputThrottle(written.append, clock=lambda: 0.0)
    throttle.emit(output("a", "line 1"))
    throttle.emit(output("a", "line 2"))
    result = ev.ToolResult(
        session_id="s", tool_call_id="a", tool_name="run_shell_command", status="ok", content="x"
    )
    throttle.emit(result)
    assert shown(written) == ["line 1", "line 2", "tool_result"]
    await asyncio.sleep(MIN_INTERVAL_S * 2)  # the timer of line 2 finds nothing left
    assert len(written) == 3


def test_told_from_a_thread_it_waits_for_the_next_event() -> None:
    written: list[ev.TurnEvent] = []
    throttle = ToolOutputThrottle(written.append, clock=lambda: 0.0)
    throttle.emit(output("a", "line 1"))
    throttle.emit(output("a", "line 2"))  # no running loop: no timer
    throttle.flush()
    assert shown(written) == ["line 1", "line 2"]
