"""One tool call in the transcript: a line (status, name, key argument) and its result.

While it runs, the last lines it printed (`ToolOutput`) show under the line, each cut to one
row, until the result replaces them. Arguments, output and results show their hidden
characters (tui/render/visible_text.py); a long result is folded.
"""

from __future__ import annotations

from functools import partial

from rich.console import RenderableType
from rich.panel import Panel
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from co_tui.tui.render.tool_status import glyph, style
from co_tui.tui.render.visible_text import one_line, visible_text
from co_tui.tui.widgets.items import TranscriptItem, WidgetFactory
from co_tui.tui.widgets.readout import Readout

RESULT_COLLAPSE_LINES = 12
LIVE_LINE_CELLS = 300  # a live line is cut to the block's width anyway


class ToolCallBlock(Vertical, TranscriptItem):
    """One tool call: a dim line (name + key argument) and, later, its result."""

    # The user approved this command with the network on (the dialog's `w`): the line says so.
    network: reactive[bool] = reactive(False, init=False)

    def __init__(
        self,
        tool_call_id: str,
        name: str,
        key_arg: str,
        *,
        status: str = "running",
        duration_s: float | None = None,
        result: tuple[str, str | None] | None = None,
        network: bool = False,
    ) -> None:
        finished = status not in ("running", "ok")
        super().__init__(classes="tool-call" + (f" -{status}" if finished else ""))
        self.tool_call_id = tool_call_id
        self.tool_name = name
        self.key_arg = key_arg
        self.status = status
        self.duration_s = duration_s
        self.set_reactive(ToolCallBlock.network, network)
        self._line = Readout(self._line_text(), classes="tool-line", markup=False)
        self._live = Readout("", classes="tool-live", markup=False)
        self._live.display = False
        self._result = result
        self._composed = False

    def watch_network(self) -> None:
        self._line.update(self._line_text())

    def _line_text(self) -> Text:
        text = Text()
        text.append(f"{glyph(self.status)} ", style=style(self.status))
        text.append_text(visible_text(self.tool_name, keep="", style="bold"))
        if self.network:
            text.append("  [with network]", style="bold yellow")
        if self.key_arg:
            text.append("  ")
            text.append_text(one_line(self.key_arg, 200))
        if self.status not in ("running", "ok"):
            text.append(f"  {self.status}", style=style(self.status))
        if self.duration_s is not None and self.status != "denied":
            text.append(f"  {self.duration_s:.1f}s")
        return text

    def compose(self) -> ComposeResult:
        self._composed = True
        yield self._line
        yield self._live
        if self._result is not None:
            yield result_widget(*self._result)

    @property
    def is_settled(self) -> bool:
        return self.status != "running"

    def show_output(self, lines: tuple[str, ...]) -> None:
        """The last lines the running call printed; ignored once it has its result."""
        if self.status != "running":
            return
        text = Text(no_wrap=True, overflow="ellipsis", style="dim")
        for index, line in enumerate(lines):
            if index:
                text.append("\n")
            text.append_text(one_line(line, LIVE_LINE_CELLS))
        self._live.update(text)
        self._live.display = bool(lines)

    def set_result(
        self, status: str, content: str, display: str | None, duration_s: float | None
    ) -> None:
        self._live.display = False
        self._live.update("")
        self.status = status
        self.duration_s = duration_s
        self._line.update(self._line_text())
        self.set_class(status != "ok", f"-{status}")
        if status == "denied":
            return
        self._result = (content, display)
        if self._composed:  # else compose() shows it
            self.mount(result_widget(content, display))

    def archived(self) -> WidgetFactory:
        return partial(
            ToolCallBlock,
            self.tool_call_id,
            self.tool_name,
            self.key_arg,
            status=self.status,
            duration_s=self.duration_s,
            result=self._result,
            network=self.network,
        )


def result_widget(content: str, display: str | None) -> Widget:
    """A `display` field verbatim; any other text in a panel; long ones collapsed."""
    body = display if display is not None else content
    lines = body.count("\n") + 1
    renderable: RenderableType
    if display is not None:
        renderable = visible_text(display, keep="\n\t")
    else:
        shown = visible_text(content, keep="\n\t")
        renderable = Panel(shown, border_style="bright_black", expand=True)
    view = Static(renderable, classes="tool-result", markup=False)
    if lines > RESULT_COLLAPSE_LINES:
        return Collapsible(
            view, title=f"output ({lines} lines)", collapsed=True, classes="tool-result-fold"
        )
    return view
