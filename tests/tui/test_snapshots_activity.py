"""Snapshots of the signs of life: the activity line (its clock stopped, then moved on by the
test), a running command's last lines in its block, the "thought for N s" line folded and
unfolded, and the "↓ new output" marker. At 80x24, the smallest screen a user reads at.
Update with `--snapshot-update` and look at every SVG in snapshots/test_snapshots_activity/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from co_tui.protocol import events as ev
from co_tui.tui.app import CoApp
from tests.tui.helpers import StillClock, drawn, make_app, text_stream, wait_until

SIZE = (80, 24)
SID = "11111111-2222-3333-4444-555555555555"
PIP = [
    "Collecting requests",
    "  Downloading requests-2.32.3-py3-none-any.whl (64 kB)",
    "Collecting charset-normalizer<4,>=2",
    "  Downloading charset_normalizer-3.4.0-cp311-cp311-manylinux_x86_64.whl (142 kB)",
    "     ━━━━━━━━━━━━━━━━━━━━━━━━╸━━━━━━━━━━━━━━━ 90.1/142.0 kB 1.2 MB/s eta 0:00:01",
]


def app_with_clock(tmp_path: Path) -> tuple[CoApp, StillClock]:
    app = make_app(text_stream("unused"), tmp_path)
    clock = StillClock()
    app.chat.activity_line.clock = clock
    return app, clock


async def ready(pilot: Any) -> CoApp:
    app: CoApp = pilot.app
    app.chat.prompt.cursor_blink = False
    assert await app.wait_ready()
    return app


async def shown(pilot: Any, *events: ev.TurnEvent) -> None:
    app: CoApp = pilot.app
    for event in events:
        app.frontend.emit(event)
    app.frontend.flush()
    await drawn(pilot, app)
    await pilot.pause()


def test_running_a_command_with_its_last_lines(snap_compare: Any, tmp_path: Path) -> None:
    app, clock = app_with_clock(tmp_path)
    cmd = "pip install requests"

    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        await shown(
            pilot,
            ev.TurnStart(session_id=SID, prompt="install requests"),
            ev.ToolCall(
                session_id=SID,
                tool_call_id="c1",
                tool_name="run_shell_command",
                args={"cmd": cmd},
                key_arg=cmd,
            ),
            ev.ToolOutput(session_id=SID, tool_call_id="c1", lines=tuple(PIP)),
        )
        clock.advance(64)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_thinking_for_twelve_seconds(snap_compare: Any, tmp_path: Path) -> None:
    app, clock = app_with_clock(tmp_path)

    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        await shown(
            pilot,
            ev.TurnStart(session_id=SID, prompt="plan my week"),
            ev.ThinkingStart(session_id=SID),
            ev.ThinkingDelta(session_id=SID, content="The user wants a plan."),
        )
        clock.advance(12.3)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


THOUGHT = (
    "The user wants their week planned. Monday is for the inbox, Friday for the sprint;\n"
    "the report fits on Tuesday."
)


async def a_turn_that_thought(pilot: Any) -> None:
    await ready(pilot)
    pilot.app.chat.prompt.text = ""
    await shown(
        pilot,
        ev.TurnStart(session_id=SID, prompt="plan my week"),
        ev.ThinkingStart(session_id=SID),
        ev.ThinkingDelta(session_id=SID, content=THOUGHT),
        ev.ThinkingEnd(session_id=SID, content=THOUGHT, duration_s=12.4),
        ev.TextStart(session_id=SID),
        ev.TextDelta(session_id=SID, content="Inbox on Monday, the report on Tuesday."),
        ev.TextEnd(session_id=SID, content="Inbox on Monday, the report on Tuesday."),
        ev.TurnEnd(session_id=SID),
    )


def test_thought_for_n_seconds_folded(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=a_turn_that_thought)


def test_thought_for_n_seconds_unfolded(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        await a_turn_that_thought(pilot)
        await pilot.click(".thought CollapsibleTitle")
        await pilot.pause()
        pilot.app.chat.prompt.focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_new_output_below_while_reading_above(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        chat = (await ready(pilot)).chat
        lines = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(1, 25))
        await shown(
            pilot,
            ev.TurnStart(session_id=SID, prompt="a long answer"),
            ev.TextStart(session_id=SID),
            ev.TextDelta(session_id=SID, content=lines),
            ev.TextEnd(session_id=SID, content=lines),
            ev.TurnEnd(session_id=SID),
        )
        chat.transcript.to_top()
        await pilot.pause()
        await shown(pilot, ev.Status(session_id=SID, message="more below"))
        await wait_until(pilot, lambda: chat.new_output.display, "the new output marker")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
