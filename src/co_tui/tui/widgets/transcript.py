"""The transcript: the main session's conversation, driven by its events.

It handles `ShowEvent`s (tui/messages.py) for the main session only: a user turn, streamed
answers, inline tool calls, decisions, notes. Sub-agents never reach it. Old items are pruned
from the DOM (kept as cheap factories) and come back when scrolled to; a restored session
(`TranscriptRestored`, the orchestrator's replay events) builds only its visible tail.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from functools import partial

from textual import on
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from co_tui.orchestrator import events as ev
from co_tui.tui.messages import Settle, ShowEvent, TranscriptRestored
from co_tui.tui.widgets.assistant_message import AssistantMessage
from co_tui.tui.widgets.decision import approval_line
from co_tui.tui.widgets.items import Note, RenderedItem, TranscriptItem, markdown
from co_tui.tui.widgets.tool_call import ToolCallBlock
from co_tui.tui.widgets.user_message import UserMessage

MAX_ITEMS = 120  # transcript items kept mounted; older ones are archived
PRUNE_BATCH = 40

WidgetFactory = Callable[[], Widget]


class Transcript(VerticalScroll):
    """The scrolling conversation. Follows new output while at the bottom (anchor)."""

    can_focus = False

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._archived: list[WidgetFactory] = []
        self._marker = Static("", classes="archived-marker")
        # The running turn: its answers, the one streaming now, its tool calls.
        self._answers: list[AssistantMessage] = []
        self._current: AssistantMessage | None = None
        self._tools: dict[str, ToolCallBlock] = {}

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

    # -- the main session's events --
    @on(ShowEvent)
    def _show(self, message: ShowEvent) -> None:
        if not self.is_attached:  # the app is closing: a cancelled turn's last events
            return
        match message.event:
            case ev.TurnStart(prompt=prompt, replayed=replayed):
                self._answers, self._current, self._tools = [], None, {}
                if replayed:
                    self.add(UserMessage(prompt))
            case ev.TextStart():
                self._end_answer()
                self._current = AssistantMessage()
                self._answers.append(self._current)
                self.add(self._current)
            case ev.TextDelta(content=delta) if self._current is not None:
                self._current.feed(delta)
            case ev.TextEnd():
                self._end_answer()
            case ev.ToolCall() as call:
                block = ToolCallBlock(call.tool_call_id, call.tool_name, call.key_arg)
                self._tools[call.tool_call_id] = block
                self.add(block)
            case ev.ToolResult() as result:
                self._tool_result(result)
            case ev.ApprovalRecord() as record:
                self.add(Note(approval_line(record), "decision"))
            case ev.Status(message=text, level=level):
                self.add(Note(text, level))
            case ev.Compacted() as compacted:
                self.add(Note(compacted.describe(), "info"))
            case ev.AttemptDiscarded(reason=reason):
                self._discard_answer(reason)
            case ev.Error(message=text):
                self.add(Note(text, "error"))
            case ev.TurnEnd(interrupted=interrupted):
                self._end_turn(interrupted)
            case _:
                pass

    def _end_answer(self, interrupted: bool = False) -> None:
        if self._current is not None:
            self._current.finish(interrupted)
            self._current = None

    def _discard_answer(self, reason: str) -> None:
        """A failed attempt's partial answer goes; the retried attempt answers instead."""
        if self._answers:
            self._answers.pop().remove()
        self.add(Note(f"discarded a partial answer ({reason})", "warning"))

    def _tool_result(self, result: ev.ToolResult) -> None:
        block = self._tools.get(result.tool_call_id)
        if block is None:  # a result without its call (a resumed approval): show both
            block = ToolCallBlock(result.tool_call_id, result.tool_name, "")
            self._tools[result.tool_call_id] = block
            self.add(block)
        block.set_result(result.status, result.content, result.display, result.duration_s)

    def _end_turn(self, interrupted: bool) -> None:
        if self._current is not None:
            self._end_answer(interrupted)
        elif interrupted:
            items = self.items
            last = items[-1] if items else None
            if isinstance(last, AssistantMessage) and last in self._answers:
                last.mark_interrupted()
            else:
                self.add(Note("interrupted", "warning"))
        for block in self._tools.values():
            if block.status == "running":
                block.set_result("interrupted" if interrupted else "failed", "", None, None)

    @on(Settle)
    async def _settle(self, message: Settle) -> None:
        try:
            if message.laid_out:
                for answer in self._answers:
                    await answer.wait_settled()
                await self.layout_settled()
        finally:
            if not message.done.done():
                message.done.set_result(None)

    @on(TranscriptRestored)
    def _restored(self, message: TranscriptRestored) -> None:
        self.clear_all()
        self.load_items(restored_items(message.events), message.visible)

    def clear_all(self) -> None:
        self._answers, self._current, self._tools = [], None, {}
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

    # -- reading history from the keyboard (the prompt keeps focus) --
    def page(self, direction: int) -> None:
        """A page up (-1) or down (+1)."""
        if direction < 0:
            self._scroll_up(self.scroll_page_up)
        else:
            self.scroll_page_down(animate=False)

    def line(self, direction: int) -> None:
        if direction < 0:
            self._scroll_up(self.scroll_up)
        else:
            self.scroll_down(animate=False)

    def to_top(self) -> None:
        self._scroll_up(self.scroll_home)

    def to_bottom(self) -> None:
        """The end, following new output again."""
        self.scroll_end(animate=False)

    def _scroll_up(self, scroll: Callable[..., object]) -> None:
        # At the top already, scrolling does not move: show the next archived batch instead.
        if self.scroll_y <= 0 and self._archived:
            self.restore_batch()
        else:
            scroll(animate=False)

    def restore_batch(self) -> None:
        batch = self._archived[-PRUNE_BATCH:]
        del self._archived[-PRUNE_BATCH:]
        widgets = [factory() for factory in batch]
        self.mount(*widgets, after=self._marker)
        self._update_marker()


# -- a restored conversation ------------------------------------------------------------


def _answer(text: str) -> Widget:
    return RenderedItem(markdown(text), "assistant-message frozen")


def restored_items(events: Iterable[ev.TurnEvent]) -> list[WidgetFactory]:
    """One cheap factory per item of a replayed conversation, none of them built yet: what
    a live turn shows for the same events, with answers already finished."""
    items: list[WidgetFactory] = []
    calls: dict[str, ev.ToolCall] = {}
    for event in events:
        match event:
            case ev.TurnStart(prompt=prompt):
                items.append(partial(UserMessage, prompt))
            case ev.TextEnd(content=text) if text.strip():
                items.append(partial(_answer, text))
            case ev.ToolCall() as call:
                calls[call.tool_call_id] = call
            case ev.ToolResult() as result:
                items.append(partial(_restored_tool, calls.get(result.tool_call_id), result))
            case ev.Status(message=text, level=level):
                items.append(partial(Note, text, level))
            case ev.Compacted() as compacted:
                items.append(partial(Note, compacted.describe(), "info"))
            case ev.Error(message=text):
                items.append(partial(Note, text, "error"))
            case ev.TurnEnd(interrupted=True):
                items.append(partial(Note, "interrupted", "warning"))
            case _:
                pass
    return items


def _restored_tool(call: ev.ToolCall | None, result: ev.ToolResult) -> Widget:
    denied = result.status == "denied"
    return ToolCallBlock(
        result.tool_call_id,
        result.tool_name,
        call.key_arg if call is not None else "",
        status=result.status,
        duration_s=result.duration_s,
        result=None if denied else (result.content, result.display),
    )
