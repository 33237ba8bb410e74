"""The sidebar: live thinking, this turn's tool calls with status and duration, token usage,
and sub-agent sessions (which never reach the transcript)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from co_tui.tui.tool_status import glyph, style
from co_tui.tui.visible_text import one_line, visible_text
from co_tui.tui.widgets.subagents import SubagentPanel

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

    def __init__(self, *, show_thinking: bool, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.show_thinking = show_thinking
        self._thinking: list[str] = []
        self._thinking_dirty = False
        self._tools: dict[str, ToolRow] = {}
        self._usage_text = Text("no tokens yet", style="dim")
        self._thinking_view = Static(Text("", style="dim italic"), classes="sb-thinking")
        self._tools_view = Static(Text("none", style="dim"), classes="sb-tools")
        self._usage_view = Static(self._usage_text, classes="sb-usage")
        self._subagents_view = SubagentPanel(classes="sb-subagents")
        self._thinking_title = Static("Thinking", classes="sb-title")
        self._subagents_title = Static("Sub-agents", classes="sb-title")

    def compose(self):  # type: ignore[no-untyped-def]
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
        self.set_interval(THINKING_FLUSH, self._flush_thinking)

    # -- thinking --
    def set_show_thinking(self, show: bool) -> None:
        self.show_thinking = show
        self._apply_thinking_visibility()
        self._thinking_dirty = True
        self._flush_thinking()

    def _apply_thinking_visibility(self) -> None:
        self._thinking_title.display = self.show_thinking
        self._thinking_view.display = self.show_thinking

    def thinking_start(self) -> None:
        if self._thinking:
            self._thinking.append("\n\n")
        self._thinking_dirty = True

    def thinking_delta(self, delta: str) -> None:
        self._thinking.append(delta)
        if len(self._thinking) > 512:  # keep the buffer small
            self._thinking = ["".join(self._thinking)[-THINKING_TAIL_CHARS:]]
        self._thinking_dirty = True

    def thinking_text(self) -> str:
        return "".join(self._thinking)

    def _flush_thinking(self) -> None:
        if not self._thinking_dirty or not self.show_thinking:
            return
        self._thinking_dirty = False
        text = "".join(self._thinking)
        if len(text) > THINKING_TAIL_CHARS:
            text = "…" + text[-THINKING_TAIL_CHARS:]
        self._thinking_view.update(visible_text(text or "(none)", keep="\n\t", style="dim italic"))

    # -- tools --
    def new_turn(self) -> None:
        self._thinking = []
        self._thinking_dirty = True
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
    def set_usage(self, turn_in: int, turn_out: int, session_total: int, requests: int) -> None:
        text = Text()
        text.append(f"turn    {turn_in:,} in / {turn_out:,} out\n")
        text.append(f"        {requests} request(s)\n", style="dim")
        text.append(f"session {session_total:,}")
        self._usage_view.update(text)

    # -- sub-agents --
    @property
    def subagents(self) -> SubagentPanel:
        """The sub-agent blocks; shown from the first sub-agent on."""
        self._subagents_title.display = True
        self._subagents_view.display = True
        return self._subagents_view

    def subagent_note(self, session_id: str, note: str) -> None:
        self.subagents.note(session_id, note)
