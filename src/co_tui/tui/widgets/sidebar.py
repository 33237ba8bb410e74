"""The sidebar: live thinking, this turn's tool calls with status and duration, token usage,
and sub-agent sessions (which never reach the transcript).

It handles the `ShowEvent`s the chat screen routes to it (tui/display.py): the main
session's thinking, tool calls and usage, and every event of a sub-agent. `show_thinking` is
a reactive; the session's token total and cost come from `status`, bound to the chat
screen's `SessionStatus`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from co_tui.safety.visible import visible
from co_tui.session.status import SessionStatus
from co_tui.tui.messages import ShowEvent
from co_tui.tui.render.tool_status import WAITING, glyph, style
from co_tui.tui.render.visible_text import one_line, visible_text
from co_tui.tui.widgets.decision import decision_words
from co_tui.tui.widgets.readout import Readout
from co_tui.tui.widgets.subagents import SubagentPanel

if TYPE_CHECKING:  # at run time turn events are imported where matched (see tui/display.py)
    from co_tui.protocol import events as ev

THINKING_TAIL_CHARS = 1500  # only the end of long thinking is shown: updates stay O(1)
THINKING_FLUSH = 1 / 15


@dataclass
class ToolRow:
    name: str
    key_arg: str
    status: str = "running"
    duration_s: float | None = None
    session: str = ""  # "" for the main session, else a short sub-agent label


class Sidebar(VerticalScroll):
    can_focus = False
    show_thinking = reactive(False, init=False)
    status: reactive[SessionStatus] = reactive(SessionStatus(), init=False, repaint=False)

    def __init__(self, *, show_thinking: bool, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.set_reactive(Sidebar.show_thinking, show_thinking)
        self._usage: ev.Usage | None = None
        self._thinking: list[str] = []
        self._thinking_dirty = False
        self._flush_timer: Timer | None = None
        self._tools: dict[str, ToolRow] = {}
        self._usage_text = Text("no tokens yet", style="dim")
        self._thinking_view = Readout(Text("", style="dim italic"), classes="sb-thinking")
        self._tools_view = Readout(Text("none", style="dim"), classes="sb-tools")
        self._usage_view = Readout(self._usage_text, classes="sb-usage")
        self._subagents_view = SubagentPanel(classes="sb-subagents")
        self._thinking_title = Static("Thinking", classes="sb-title")
        self._subagents_title = Static("Sub-agents", classes="sb-title")

    def compose(self) -> ComposeResult:
        yield self._thinking_title
        yield self._thinking_view
        yield Static("Tools this turn", classes="sb-title")
        yield self._tools_view
        yield Static("Tokens", classes="sb-title")
        yield self._usage_view
        yield self._subagents_title
        yield self._subagents_view

    def on_mount(self) -> None:
        self._apply_thinking_visibility()
        self._subagents_title.display = False
        self._subagents_view.display = False
        # Paused until there is thinking to show: an idle app has no timer waking it.
        self._flush_timer = self.set_interval(THINKING_FLUSH, self._flush_thinking, pause=True)

    # -- events --
    @on(ShowEvent)
    def _show(self, message: ShowEvent) -> None:
        from co_tui.protocol import events as ev

        if message.subagent:
            self._show_subagent(message.event)
            return
        match message.event:
            case ev.TurnStart(replayed=False):
                self.new_turn()
            case ev.ThinkingStart():
                self.thinking_start()
            case ev.ThinkingDelta(content=delta):
                self.thinking_delta(delta)
            case ev.ToolCall() as call:
                self.tool_call(call.tool_call_id, call.tool_name, call.key_arg)
            case ev.ToolResult() as result:
                self.tool_result(
                    result.tool_call_id, result.tool_name, result.status, result.duration_s
                )
            case ev.Usage() as usage:
                self._usage = usage
                self._render_usage()
            case ev.ApprovalRecord() as record:
                self.approval_decided(record)
            case ev.TurnEnd(interrupted=interrupted):
                self._end_running("interrupted" if interrupted else "failed")
            case _:
                pass

    def _show_subagent(self, event: ev.TurnEvent) -> None:
        """A sub-agent's events: its block in the panel, its calls in the tool list too."""
        from co_tui.protocol import events as ev

        sid = event.session_id
        panel = self.subagents
        match event:
            case ev.TurnStart(prompt=task):
                panel.start(sid, task)
            case ev.ThinkingStart():
                panel.note(sid, "thinking…")
            case ev.TextEnd(content=text):
                panel.note(sid, text)
            case ev.ToolCall() as call:
                self.tool_call(call.tool_call_id, call.tool_name, call.key_arg, sid[:8])
                panel.tool_call(sid, call.tool_call_id, call.tool_name, call.key_arg)
            case ev.ToolResult() as result:
                self.tool_result(
                    result.tool_call_id, result.tool_name, result.status, result.duration_s
                )
                panel.tool_result(sid, result.tool_call_id, result.tool_name, result.status)
            case ev.Usage() as usage:
                panel.usage(sid, usage.input_tokens, usage.output_tokens, usage.requests)
            case ev.Status(message=text):
                panel.note(sid, text)
            case ev.Error(message=text):
                panel.error(sid, text)
            case ev.ApprovalRecord() as record:
                self.approval_decided(record)
                name = visible(record.tool_name, keep="\n\t")
                panel.note(sid, f"{decision_words(record)} {name}")
            case ev.TurnEnd(interrupted=interrupted):
                panel.end(sid, interrupted)
            case _:
                pass

    # -- thinking --
    def watch_show_thinking(self) -> None:
        self._apply_thinking_visibility()
        self._thinking_dirty = True
        self._flush_thinking()

    def _thinking_changed(self) -> None:
        self._thinking_dirty = True
        if self._flush_timer is not None:
            self._flush_timer.resume()

    def _apply_thinking_visibility(self) -> None:
        self._thinking_title.display = self.show_thinking
        self._thinking_view.display = self.show_thinking

    def thinking_start(self) -> None:
        if self._thinking:
            self._thinking.append("\n\n")
        self._thinking_changed()

    def thinking_delta(self, delta: str) -> None:
        self._thinking.append(delta)
        if len(self._thinking) > 512:  # keep the buffer small
            self._thinking = ["".join(self._thinking)[-THINKING_TAIL_CHARS:]]
        self._thinking_changed()

    def thinking_text(self) -> str:
        return "".join(self._thinking)

    def _flush_thinking(self) -> None:
        if not self._thinking_dirty or not self.show_thinking:
            if self._flush_timer is not None:
                self._flush_timer.pause()
            return
        self._thinking_dirty = False
        text = "".join(self._thinking)
        if len(text) > THINKING_TAIL_CHARS:
            text = "…" + text[-THINKING_TAIL_CHARS:]
        self._thinking_view.update(visible_text(text or "(none)", keep="\n\t", style="dim italic"))

    # -- tools --
    def new_turn(self) -> None:
        self._usage = None  # the last turn's tokens are not this one's
        self._render_usage()
        self._thinking = []
        self._thinking_changed()
        self._tools.clear()
        self._subagents_view.clear()
        self._subagents_title.display = self._subagents_view.display = False
        self._render_tools()
        self._flush_thinking()

    def tool_call(self, call_id: str, name: str, key_arg: str, session: str = "") -> None:
        self._tools[call_id] = ToolRow(name, key_arg, session=session)
        self._render_tools()

    def tool_result(self, call_id: str, name: str, status: str, duration_s: float | None) -> None:
        row = self._tools.setdefault(call_id, ToolRow(name, ""))
        row.status, row.duration_s = status, duration_s
        self._render_tools()

    def waiting_for_approval(self, call_id: str, name: str) -> None:
        """The call waits for the user's decision (the chat screen opened the dialog)."""
        row = self._tools.setdefault(call_id, ToolRow(name, ""))
        row.status = WAITING
        self._render_tools()

    def approval_decided(self, record: ev.ApprovalRecord) -> None:
        """Approved, the call runs now; denied, it never will."""
        row = self._tools.get(record.tool_call_id)
        if row is None or row.status not in (WAITING, "running"):
            return
        row.status = "denied" if record.decision == "deny" else "running"
        self._render_tools()

    def _end_running(self, status: str) -> None:
        """The turn is over: a call still running (or waiting) never finished."""
        for row in self._tools.values():
            if row.status in ("running", WAITING) and not row.session:
                row.status = status
        self._render_tools()

    def _render_tools(self) -> None:
        if not self._tools:
            self._tools_view.update(Text("none", style="dim"))
            return
        text = Text()
        for i, row in enumerate(self._tools.values()):
            if i:
                text.append("\n")
            text.append(f"{glyph(row.status)} ", style=style(row.status))
            if row.session:
                text.append(f"[{row.session}] ", style="magenta")
            text.append_text(visible_text(row.name, keep="", style="bold"))
            text.append(f" {row.status}", style=style(row.status))
            if row.duration_s is not None:
                text.append(f" {row.duration_s:.1f}s", style="dim")
            if row.key_arg:
                text.append("\n  ")
                text.append_text(one_line(row.key_arg, 60, style="dim"))
        self._tools_view.update(text)

    # -- usage --
    def watch_status(self, old: SessionStatus, new: SessionStatus) -> None:
        if (old.session_tokens, old.cost) != (new.session_tokens, new.cost):
            self._render_usage()

    def _render_usage(self) -> None:
        usage = self._usage
        text = Text()
        if usage is None:
            # As many lines as a turn's usage: a new turn repaints, it does not lay out.
            text.append("turn    none yet\n        0 requests\n", style="dim")
        else:
            text.append(f"turn    {usage.input_tokens:,} in / {usage.output_tokens:,} out\n")
            text.append(f"        {usage.requests} request(s)\n", style="dim")
        text.append(f"session {self.status.session_tokens:,}")
        if self.status.cost:
            text.append(f" · about {self.status.cost}", style="dim")
        self._usage_view.update(text)

    # -- sub-agents --
    @property
    def subagents(self) -> SubagentPanel:
        """The sub-agent blocks; shown from the first sub-agent on."""
        self._subagents_title.display = True
        self._subagents_view.display = True
        return self._subagents_view
