"""Which widget shows which event: one display state per session, keyed by `session_id`.

The main session is the one whose `TurnStart` has no parent; a session started by another
(`TurnStart.parent_session_id`) is a sub-agent. The main session owns the transcript (its
answers stream there); a sub-agent only ever shows in the sidebar, however its events
interleave with the main one's. Each session's state follows the streaming boundaries the
orchestrator emits, so nothing here guesses where a part starts or ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING

# Turn events are imported where they are matched, not here: the first frame does without
# them (20 frozen dataclasses, 15-25 ms to import on 2 cores).
from co_tui.tui.widgets.activity import Activity

if TYPE_CHECKING:
    from co_tui.protocol import events as ev

SHELL_TOOLS = ("run_shell_command", "!")  # their key argument is the command line


class DisplayState(StrEnum):
    IDLE = "idle"
    THINKING = "thinking"
    STREAMING_TEXT = "streaming text"
    TOOL_EXECUTING = "running a tool"
    ERROR = "error"


class Target(StrEnum):
    """The widgets an event can go to."""

    TRANSCRIPT = "transcript"
    SIDEBAR = "sidebar"


@dataclass
class SessionDisplay:
    session_id: str
    parent_session_id: str | None = None
    state: DisplayState = DisplayState.IDLE
    in_turn: bool = False  # between its TurnStart and TurnEnd
    running: dict[str, ev.ToolCall] = field(default_factory=dict)  # calls without a result

    @property
    def is_subagent(self) -> bool:
        return self.parent_session_id is not None

    @property
    def running_tools(self) -> int:
        return len(self.running)

    def advance(self, event: ev.TurnEvent) -> None:
        from co_tui.protocol import events as ev

        match event:
            case ev.TurnStart():
                self.state, self.in_turn = DisplayState.IDLE, True
                self.running.clear()
            case ev.ThinkingStart():
                self.state = DisplayState.THINKING
            case ev.TextStart():
                self.state = DisplayState.STREAMING_TEXT
            case ev.ThinkingEnd() | ev.TextEnd():
                self.state = self._between_parts()
            case ev.ToolCall():
                self.running[event.tool_call_id] = event
                self.state = DisplayState.TOOL_EXECUTING
            case ev.ToolResult():
                self.running.pop(event.tool_call_id, None)
                self.state = self._between_parts()
            case ev.Error():
                self.state = DisplayState.ERROR
            case ev.TurnEnd():
                self.state, self.in_turn = DisplayState.IDLE, False
                self.running.clear()
            case _:
                pass

    def _between_parts(self) -> DisplayState:
        return DisplayState.TOOL_EXECUTING if self.running else DisplayState.IDLE

    def activity(self, provider: str) -> Activity | None:
        """What the session is doing now, for the activity line; None when nothing runs.
        `provider`: who a request waits for."""
        if self.running:
            *others, call = self.running.values()
            what = "running" if call.tool_name in SHELL_TOOLS else f"running {call.tool_name}"
            return Activity(what, call.key_arg, len(others), call.tool_call_id)
        if self.state is DisplayState.THINKING:
            return Activity("thinking…")
        if self.state is DisplayState.STREAMING_TEXT:
            return Activity("answering…")
        if self.in_turn and self.state is not DisplayState.ERROR:
            return Activity(f"waiting for {provider}…")
        return None


@cache
def _main_targets() -> dict[type, tuple[Target, ...]]:
    """Where the main session's events go. A sub-agent's go to the sidebar only."""
    from co_tui.protocol import events as ev

    return {
        ev.TurnStart: (Target.TRANSCRIPT, Target.SIDEBAR),
        ev.ThinkingStart: (Target.SIDEBAR,),
        ev.ThinkingDelta: (Target.SIDEBAR,),
        ev.ThinkingEnd: (Target.TRANSCRIPT,),  # its "thought for N s" line
        ev.TextStart: (Target.TRANSCRIPT,),
        ev.TextDelta: (Target.TRANSCRIPT,),
        ev.TextEnd: (Target.TRANSCRIPT,),
        ev.ToolCall: (Target.TRANSCRIPT, Target.SIDEBAR),
        ev.ToolOutput: (Target.TRANSCRIPT,),
        ev.ToolResult: (Target.TRANSCRIPT, Target.SIDEBAR),
        ev.ApprovalRecord: (Target.TRANSCRIPT, Target.SIDEBAR),  # the sidebar's call: decided
        ev.Usage: (Target.SIDEBAR,),
        ev.Status: (Target.TRANSCRIPT,),
        ev.ProviderWaiting: (),  # the status bar's (the chat screen follows it)
        ev.Compacted: (Target.TRANSCRIPT,),
        ev.AttemptDiscarded: (Target.TRANSCRIPT,),
        ev.Error: (Target.TRANSCRIPT,),
        ev.Interrupted: (),  # TurnEnd(interrupted=True) follows and says it
        ev.ResponseComplete: (),
        ev.TurnEnd: (Target.TRANSCRIPT, Target.SIDEBAR),
    }


class DisplayRouter:
    def __init__(self) -> None:
        self.sessions: dict[str, SessionDisplay] = {}
        self.main_id = ""

    def session(self, event: ev.TurnEvent) -> SessionDisplay:
        """The event's session's display state, after the event."""
        from co_tui.protocol import events as ev

        display = self.sessions.get(event.session_id)
        if isinstance(event, ev.TurnStart):
            if display is None:
                display = SessionDisplay(event.session_id, event.parent_session_id)
                self.sessions[event.session_id] = display
            if event.parent_session_id is None and event.session_id != self.main_id:
                self._new_main(event.session_id)
        elif display is None:
            # Events of a session never started here: the main one if none is known yet.
            if not self.main_id:
                self.main_id = event.session_id
            parent = None if event.session_id == self.main_id else self.main_id
            display = SessionDisplay(event.session_id, parent)
            self.sessions[event.session_id] = display
        display.advance(event)
        return display

    @property
    def main(self) -> SessionDisplay | None:
        return self.sessions.get(self.main_id)

    def _new_main(self, session_id: str) -> None:
        """A new main session (/clear, /resume): the old one's sub-agents are forgotten."""
        self.main_id = session_id
        self.sessions = {session_id: self.sessions[session_id]}

    def targets(self, event: ev.TurnEvent) -> tuple[SessionDisplay, tuple[Target, ...]]:
        display = self.session(event)
        if display.is_subagent:
            return display, (Target.SIDEBAR,)
        return display, _main_targets()[type(event)]
