"""The sidebar's sub-agent area: one collapsible block per sub-agent session (task, status,
tool calls, tokens). Sub-agent text never reaches the transcript; its last line shows here."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Collapsible, Static

from co_tui.safety.visible import visible
from co_tui.tui.render.tool_status import glyph, style

TITLE_CHARS = 28
NOTE_CHARS = 160
# A sub-agent's status, drawn with the tool-call glyphs.
_STATUS_GLYPH = {
    "running": "running",
    "done": "ok",
    "failed": "failed",
    "interrupted": "interrupted",
}


def _clip(text: str, limit: int) -> str:
    text = visible(" ".join(text.split()), keep="")
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class SubagentState:
    task: str
    status: str = "running"  # running | done | failed | interrupted
    note: str = ""  # the latest thing it said (thinking, its answer, an error)
    tools: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # id: name, arg, status
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0

    def title(self) -> Content:
        tokens = self.input_tokens + self.output_tokens
        mark = glyph(_STATUS_GLYPH.get(self.status, self.status))
        return Content(f"{mark} {_clip(self.task, TITLE_CHARS)} · {tokens:,} tok")

    def body(self) -> Text:
        text = Text()
        text.append("task ", style="dim")
        text.append(_clip(self.task, NOTE_CHARS))
        status = _STATUS_GLYPH.get(self.status, self.status)
        text.append("\nstatus ", style="dim")
        text.append(self.status, style=style(status))
        text.append(
            f"\ntokens {self.input_tokens:,} in / {self.output_tokens:,} out"
            f" · {self.requests} request(s)",
            style="dim",
        )
        for name, arg, tool_status in self.tools.values():
            text.append(f"\n{glyph(tool_status)} ", style=style(tool_status))
            text.append(_clip(name, NOTE_CHARS), style="bold")
            if arg:
                text.append(f" {_clip(arg, 40)}", style="dim")
        if self.note:
            text.append(f"\n{_clip(self.note, NOTE_CHARS)}", style="dim italic")
        return text


class SubagentBlock(Collapsible):
    DEFAULT_CSS = """
    SubagentBlock { padding: 0; border: none; height: auto; background: transparent; }
    SubagentBlock > Contents { padding: 0 0 0 2; height: auto; }
    """

    def __init__(self, session_id: str, state: SubagentState) -> None:
        self.session_id = session_id
        self.state = state
        self._body = Static(state.body(), classes="subagent-body")
        super().__init__(self._body, title=state.title(), collapsed=True)  # type: ignore[arg-type]

    def redraw(self) -> None:
        self.title = self.state.title()  # type: ignore[assignment]
        self._body.update(self.state.body())


class SubagentPanel(Vertical):
    """Keyed by session_id: sub-agents run concurrently and their calls interleave."""

    DEFAULT_CSS = "SubagentPanel { height: auto; }"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.blocks: dict[str, SubagentBlock] = {}

    def _block(self, session_id: str) -> SubagentBlock:
        block = self.blocks.get(session_id)
        if block is None:  # a call before its start: show it anyway
            block = self.start(session_id, "(sub-agent)")
        return block

    def start(self, session_id: str, task: str) -> SubagentBlock:
        block = SubagentBlock(session_id, SubagentState(task))
        self.blocks[session_id] = block
        self.mount(block)
        return block

    def note(self, session_id: str, note: str) -> None:
        block = self._block(session_id)
        block.state.note = note
        block.redraw()

    def tool_call(self, session_id: str, call_id: str, name: str, key_arg: str) -> None:
        block = self._block(session_id)
        block.state.tools[call_id] = (name, key_arg, "running")
        block.redraw()

    def tool_result(self, session_id: str, call_id: str, name: str, status: str) -> None:
        block = self._block(session_id)
        _, arg, _ = block.state.tools.get(call_id, (name, "", ""))
        block.state.tools[call_id] = (name, arg, status)
        block.redraw()

    def usage(self, session_id: str, input_tokens: int, output_tokens: int, requests: int) -> None:
        state = self._block(session_id).state
        state.input_tokens, state.output_tokens, state.requests = (
            input_tokens,
            output_tokens,
            requests,
        )
        self.blocks[session_id].redraw()

    def error(self, session_id: str, message: str) -> None:
        block = self._block(session_id)
        block.state.status = "failed"
        block.state.note = f"error: {message}"
        block.redraw()

    def end(self, session_id: str, interrupted: bool) -> None:
        block = self._block(session_id)
        if interrupted:
            block.state.status = "interrupted"
        elif block.state.status == "running":
            block.state.status = "done"
        block.redraw()

    def clear(self) -> None:
        self.blocks.clear()
        self.remove_children()
