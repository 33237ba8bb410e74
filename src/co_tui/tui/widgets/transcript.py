"""The transcript: user turns, streamed answers, inline tool calls, notes.

Streaming cost stays flat: an answer's finished blocks become `Static(rich Markdown)` and
only the unfinished tail lives in a Textual `Markdown` widget fed by `append`. Deltas are
buffered and applied at most every FLUSH_INTERVAL by one pump task per message. Old items
are pruned from the DOM (kept as cheap factories) and come back when scrolled to.
Tool arguments and results show their hidden characters (tui/visible_text.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from co_tui.tui.streaming import COMMIT_CHARS, split_finished
from co_tui.tui.tool_status import glyph, style
from co_tui.tui.visible_text import one_line, visible_text
from co_tui.tui.widgets.lines import RenderedLines

FLUSH_INTERVAL = 1 / 10  # at most 10 document updates a second, however many deltas
MAX_ITEMS = 120  # transcript items kept mounted; older ones are archived
PRUNE_BATCH = 40
RESULT_COLLAPSE_LINES = 12

WidgetFactory = Callable[[], Widget]


def markdown(text: str) -> RenderableType:
    from co_tui.tui.markdown import TranscriptMarkdown  # lazy: not needed for the first frame

    return TranscriptMarkdown(text)


class TranscriptItem:
    """Mixin: an item that can rebuild itself as a cheap widget after being pruned."""

    def frozen(self) -> Widget:
        raise NotImplementedError

    @property
    def is_settled(self) -> bool:
        return True


class UserMessage(Static, TranscriptItem):
    def __init__(self, text: str) -> None:
        super().__init__(markdown(text), classes="user-message")
        self.text = text

    def frozen(self) -> Widget:
        return UserMessage(self.text)


class RenderedItem(Static, TranscriptItem):
    """Any finished renderable: a committed answer, a command's output, a note."""

    def __init__(self, renderable: RenderableType, classes: str = "") -> None:
        super().__init__(renderable, classes=classes)
        self._source = renderable
        self._item_classes = classes

    def frozen(self) -> Widget:
        return RenderedItem(self._source, self._item_classes)


class Note(RenderedItem):
    """A status or error line: retries, aborts, interruptions, hints, approval decisions.
    A Text message is shown as it is (it brings its own glyph and styles)."""

    def __init__(self, message: str | Text, level: str = "info") -> None:
        if isinstance(message, str):
            glyph = {"info": "·", "warning": "!", "error": "✗"}.get(level, "·")
            message = Text(f"{glyph} ").append_text(visible_text(message, keep="\n\t"))
        super().__init__(message, classes=f"note note-{level}")


class AssistantMessage(Vertical, TranscriptItem):
    """One streamed answer. `feed` is cheap; a pump applies buffered text to the document."""

    def __init__(self) -> None:
        super().__init__(classes="assistant-message")
        self._pending: list[str] = []
        self._parts: list[str] = []  # the whole answer, for copy and for freezing
        self._live_text = ""
        self._live: Static | None = None
        self._committed = RenderedLines(classes="md-blocks")
        self._wakeup = asyncio.Event()
        self._finished = asyncio.Event()
        self._finishing = False
        self._settled = False
        self.interrupted = False
        self.committed_blocks = 0
        self._done = asyncio.Event()

    @property
    def text(self) -> str:
        return "".join(self._parts)

    @property
    def is_settled(self) -> bool:
        return self._settled

    def compose(self):  # type: ignore[no-untyped-def]
        self._live = Static("", classes="live-tail")
        yield self._committed
        yield self._live

    def on_mount(self) -> None:
        self.run_worker(self._pump(), group="pump", exit_on_error=False)

    def feed(self, delta: str) -> None:
        if self._finishing:
            return
        self._pending.append(delta)
        self._parts.append(delta)
        self._wakeup.set()

    def finish(self, interrupted: bool = False) -> None:
        self.interrupted = self.interrupted or interrupted
        self._finishing = True
        self._finished.set()
        self._wakeup.set()

    def mark_interrupted(self) -> None:
        if self.interrupted:
            return
        self.interrupted = True
        if self._settled:
            self.mount(Note("interrupted", "warning"))

    async def wait_settled(self) -> None:
        await self._done.wait()

    async def _pump(self) -> None:
        try:
            while True:
                await self._wakeup.wait()
                self._wakeup.clear()
                closing = self._finishing
                if self._pending:
                    chunk = "".join(self._pending)
                    self._pending.clear()
                    await self._apply(chunk, final=closing)
                if closing:
                    break
                # Sleep out the interval, unless the answer finishes meanwhile.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._finished.wait(), FLUSH_INTERVAL)
            await self._settle()
        finally:
            self._settled = True
            self._done.set()

    async def _apply(self, chunk: str, final: bool) -> None:
        assert self._live is not None
        text = self._live_text + chunk
        finished, reopen, rest = split_finished(text)
        if finished and (len(finished) >= COMMIT_CHARS or reopen):
            self._commit(finished)
            self._live_text = reopen + rest
        else:
            self._live_text = text
        if not final:
            self._live.update(markdown(self._live_text))

    async def _settle(self) -> None:
        """The answer is over: the live tail becomes a cheap renderable too."""
        assert self._live is not None
        tail = self._live_text
        if tail.strip():
            self._commit(tail)
        if self.interrupted:
            await self.mount(Note("interrupted", "warning"), before=self._live)
        await self._live.remove()
        self._live_text = ""
        if not self.text.strip() and not self.interrupted:
            self.display = False

    def _commit(self, text: str) -> None:
        block = markdown(text)
        # Separately rendered chunks need the blank line Markdown puts between blocks.
        self._committed.add(Group(Text(""), block) if self.committed_blocks else block)
        self.committed_blocks += 1

    def frozen(self) -> Widget:
        renderable = markdown(self.text)
        item = RenderedItem(renderable, "assistant-message frozen")
        return item


class ToolCallBlock(Vertical, TranscriptItem):
    """One tool call: a dim line (name + key argument) and, later, its result."""

    def __init__(
        self,
        tool_call_id: str,
        name: str,
        key_arg: str,
        *,
        status: str = "running",
        duration_s: float | None = None,
        result: tuple[str, str | None] | None = None,
    ) -> None:
        super().__init__(classes="tool-call")
        self.tool_call_id = tool_call_id
        self.tool_name = name
        self.key_arg = key_arg
        self.status = status
        self.duration_s = duration_s
        self._line = Static(self._line_text(), classes="tool-line", markup=False)
        self._result = result
        self._composed = False

    def _line_text(self) -> Text:
        text = Text()
        text.append(f"{glyph(self.status)} ", style=style(self.status))
        text.append_text(visible_text(self.tool_name, keep="", style="bold"))
        if self.key_arg:
            text.append("  ")
            text.append_text(one_line(self.key_arg, 200))
        if self.status not in ("running", "ok"):
            text.append(f"  {self.status}", style=style(self.status))
        if self.duration_s is not None and self.status != "denied":
            text.append(f"  {self.duration_s:.1f}s")
        return text

    def compose(self):  # type: ignore[no-untyped-def]
        self._composed = True
        yield self._line
        if self._result is not None:
            yield result_widget(*self._result)

    def set_result(
        self, status: str, content: str, display: str | None, duration_s: float | None
    ) -> None:
        self.status = status
        self.duration_s = duration_s
        self._line.update(self._line_text())
        self.set_class(status != "ok", f"-{status}")
        if status == "denied":
            return
        self._result = (content, display)
        if self._composed:  # else compose() shows it
            self.mount(result_widget(content, display))

    def frozen(self) -> Widget:
        return ToolCallBlock(
            self.tool_call_id, self.tool_name, self.key_arg,
            status=self.status, duration_s=self.duration_s, result=self._result,
        )  # fmt: skip


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


class Transcript(VerticalScroll):
    """The scrolling conversation. Follows new output while at the bottom (anchor)."""

    can_focus = False

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._archived: list[WidgetFactory] = []
        self._marker = Static("", classes="archived-marker")

    def on_mount(self) -> None:
        self.mount(self._marker)
        self._marker.display = False
        self.anchor()

    @property
    def items(self) -> list[Widget]:
        return [w for w in self.children if w is not self._marker]

    def add(self, widget: Widget) -> Widget:
        self.mount(widget)
        self._maybe_prune()
        return widget

    async def layout_settled(self) -> None:
        """Wait until pending layout (a committed block's new height) reached the screen."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.call_after_refresh(lambda: done.done() or done.set_result(None))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done, 0.5)

    def clear_all(self) -> None:
        self._archived.clear()
        for child in self.items:
            child.remove()
        self._update_marker()
        self.anchor()

    def load_items(self, factories: list[WidgetFactory], visible: int = PRUNE_BATCH) -> None:
        """A restored conversation: only the last `visible` items are built and mounted now;
        the rest wait archived (as factories) until the user scrolls up to them."""
        cut = max(0, len(factories) - visible)
        self._archived.extend(factories[:cut])
        widgets = [factory() for factory in factories[cut:]]
        if widgets:
            self.mount(*widgets)
        self._update_marker()
        self.scroll_end(animate=False)
        self.anchor()

    def _maybe_prune(self) -> None:
        items = self.items
        if len(items) <= MAX_ITEMS or self.scroll_y < self.max_scroll_y - 1:
            return  # never prune while the user is reading history
        victims: list[Widget] = []
        for widget in items[: len(items) - MAX_ITEMS + PRUNE_BATCH]:
            if not isinstance(widget, TranscriptItem) or not widget.is_settled:
                break
            victims.append(widget)
        if not victims:
            return
        self._archived.extend(w.frozen for w in victims if isinstance(w, TranscriptItem))
        for widget in victims:
            widget.remove()
        self._update_marker()

    def _update_marker(self) -> None:
        count = len(self._archived)
        self._marker.display = count > 0
        self._marker.update(f"▲ {count} earlier item(s): scroll up to show them")

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 and self._archived:
            self.restore_batch()

    def restore_batch(self) -> None:
        batch = self._archived[-PRUNE_BATCH:]
        del self._archived[-PRUNE_BATCH:]
        widgets = [factory() for factory in batch]
        self.mount(*widgets, after=self._marker)
        self._update_marker()
