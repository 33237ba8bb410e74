"""The transcript: the main session's conversation, driven by its events.

It handles `ShowEvent`s (tui/messages.py) for the main session only: a user turn, streamed
answers, inline tool calls, decisions, notes. Sub-agents never reach it. Old items are pruned
from the DOM (kept as cheap factories, with their text) and come back when scrolled to; a
restored session (`TranscriptRestored`, the orchestrator's replay events) builds only its
visible tail. `find` searches every item's stored text, archived ones included, without
building them, and counts each occurrence; to show one far from what is mounted it mounts a
window of items around it, the items before and after it archived (`_archived`, `_below`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import weakref
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from textual import on
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from co_tui.tui.messages import ItemsReleased, Settle, ShowEvent, TranscriptRestored
from co_tui.tui.widgets.assistant_message import AssistantMessage
from co_tui.tui.widgets.decision import approval_line
from co_tui.tui.widgets.items import (
    Note,
    RenderedItem,
    TranscriptItem,
    WidgetFactory,
    markdown_item,
)
from co_tui.tui.widgets.thought import Thought
from co_tui.tui.widgets.tool_call import ToolCallBlock
from co_tui.tui.widgets.user_message import UserMessage

if TYPE_CHECKING:  # at run time turn events are imported where matched (see tui/display.py)
    from co_tui.protocol import events as ev

# Older items are archived (out of the DOM, rebuilt when scrolled to) once the mounted ones
# pass either limit. Lines bound the memory: a mounted line costs about 3.6 KB (its strips
# and their caches, the Markdown it came from), so one 20k-token answer, 6,000 lines, holds
# 22 MB while mounted. A live session keeps 40 to 60 items mounted, about as many as a loaded
# one opens with (LOADED_ITEMS): after hundreds of turns it weighs what the same session
# resumed does (at 120 items it weighed 13 % more after 200 turns than after 20).
MAX_ITEMS = 60
PRUNE_BATCH = 20  # items archived at once past MAX_ITEMS, and restored at once on scrolling up
LOADED_ITEMS = 40  # items built at once when a stored conversation is loaded
MAX_LINES = 3_000  # about 75 screens of 40 rows
PRUNED_LINES = MAX_LINES // 2  # what is left mounted after pruning for lines

FOUND = "-found"  # the class of the item /find shows
# A /find match far from what is mounted: the items mounted around it (the rest archived).
WINDOW_BEFORE = 8
WINDOW_AFTER = 16


class ArchivedItem(NamedTuple):
    """An item out of the DOM: how to build it again, and its text for /find."""

    build: WidgetFactory
    text: str


class Occurrence(NamedTuple):
    """One place a /find query occurs: the item (counted from the oldest, archived ones
    included) and which occurrence in its text (0 the first)."""

    item: int
    nth: int


def occurrences(texts: list[str], query: str) -> list[Occurrence]:
    """Every occurrence of `query` (case-insensitive, not overlapping), the newest first."""
    needle = query.casefold()
    if not needle:
        return []
    found: list[Occurrence] = []
    for index in reversed(range(len(texts))):
        count = texts[index].casefold().count(needle)
        found.extend(Occurrence(index, nth) for nth in reversed(range(count)))
    return found


def item_text(widget: Widget) -> str:
    """What /find searches in a mounted item (not the echo of a /find itself)."""
    if widget.has_class("command-echo"):
        return ""
    match widget:
        case UserMessage() | RenderedItem():
            return widget.plain_text
        case AssistantMessage():
            return widget.text
        case ToolCallBlock():
            return f"{widget.tool_name} {widget.key_arg}"
        case Thought():
            return widget.text
        case _:
            return ""


class Transcript(VerticalScroll):
    """The scrolling conversation. Follows new output while at the bottom (anchor); while
    the user reads further up, `unseen_output` says that more arrived below."""

    can_focus = False
    unseen_output = reactive(False, init=False)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._archived: list[ArchivedItem] = []  # before the mounted items, oldest first
        self._below: list[ArchivedItem] = []  # after them, once /find mounted a window
        self._found: Widget | None = None
        self._find_position = 0
        self._marker = Static("", classes="archived-marker")
        self._below_marker = Static("", classes="archived-marker")
        self._leaving: weakref.WeakSet[Widget] = weakref.WeakSet()  # removed, still children
        self._placing = False  # a /find window is mounted and not yet scrolled to its match
        # The running turn: its answers, the one streaming now, its tool calls.
        self._answers: list[AssistantMessage] = []
        self._current: AssistantMessage | None = None
        self._tools: dict[str, ToolCallBlock] = {}
        self._reading_above = False  # the user scrolled away from the end

    def on_mount(self) -> None:
        self.mount(self._marker, self._below_marker)
        self._marker.display = self._below_marker.display = False
        self.anchor()

    @property
    def items(self) -> list[Widget]:
        """The mounted items, oldest first (not those being removed)."""
        markers = (self._marker, self._below_marker)
        return [w for w in self.children if w not in markers and w not in self._leaving]

    def add(self, widget: Widget) -> Widget:
        self._arriving()
        if self._below:  # the view is a window further up: what is new goes after the rest
            if isinstance(widget, TranscriptItem) and widget.is_settled:
                self._below.append(ArchivedItem(widget.archived(), item_text(widget)))
                self._update_marker()
                return widget
            self._back_to_the_end()  # a live item (an answer, a running call) is shown
        self.mount(widget, before=self._below_marker)
        self._maybe_prune()
        return widget

    def _arriving(self) -> None:
        """Something new is about to show at the end: unseen, if the user reads further up."""
        if self._reading_above:
            self.unseen_output = True

    def anchor(self, anchor: bool = True) -> None:
        super().anchor(anchor)
        if anchor:  # at the end, following again
            self._reading_above = self.unseen_output = False

    def release_anchor(self) -> None:
        """The user scrolled (Textual calls this for every scroll but the one to the end):
        new output no longer moves the view, until the view is at the end again."""
        super().release_anchor()
        self._reading_above = True

    async def layout_settled(self) -> None:
        """Wait until pending layout (a committed block's new height) reached the screen."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def settle() -> None:
            if not done.done():
                done.set_result(None)

        self.call_after_refresh(settle)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done, 0.5)

    # -- the main session's events --
    @on(ShowEvent)
    def _show(self, message: ShowEvent) -> None:
        from co_tui.protocol import events as ev

        if not self.is_attached:  # the app is closing: a cancelled turn's last events
            return
        match message.event:
            case ev.TurnStart(prompt=prompt, replayed=replayed):
                self._answers, self._current, self._tools = [], None, {}
                if replayed:
                    self.add(UserMessage(prompt))
            case ev.ThinkingEnd(content=text, duration_s=took):
                self.add(Thought(text, took))
            case ev.TextStart():
                self._end_answer()
                self._current = AssistantMessage()
                self._answers.append(self._current)
                self.add(self._current)
            case ev.TextDelta(content=delta) if self._current is not None:
                self._arriving()
                self._current.feed(delta)
            case ev.TextEnd():
                self._end_answer()
            case ev.ToolCall() as call:
                block = ToolCallBlock(call.tool_call_id, call.tool_name, call.key_arg)
                self._tools[call.tool_call_id] = block
                self.add(block)
            case ev.ToolOutput(tool_call_id=call_id, lines=lines) if call_id in self._tools:
                self._arriving()
                self._tools[call_id].show_output(lines)
            case ev.ToolResult() as result:
                self._arriving()
                self._tool_result(result)
            case ev.ApprovalRecord() as record:
                self.add(Note(approval_line(record), "decision"))
                if record.decision == "approve_network" and record.tool_call_id in self._tools:
                    self._tools[record.tool_call_id].network = True
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
        if message.keep_shown and not self._archived and not self._below:
            self.load_items(restored_items(message.events), message.visible)
            return
        self.clear_all()
        self.load_items(restored_items(message.events), message.visible)

    def clear_all(self) -> None:
        self._reading_above = self.unseen_output = False
        self._answers, self._current, self._tools = [], None, {}
        self._archived.clear()
        self._below.clear()
        self._found = None
        self._let_go(self.items)
        self._update_marker()
        self.anchor()

    def load_items(self, factories: list[ArchivedItem], visible: int = LOADED_ITEMS) -> None:
        """A restored conversation: only the last `visible` items are built and mounted now,
        before any shown already; the rest wait archived (as factories) until the user
        scrolls up to them."""
        cut = max(0, len(factories) - visible)
        self._archived.extend(factories[:cut])
        widgets = [factory.build() for factory in factories[cut:]]
        if widgets:
            self.mount(*widgets, after=self._marker)
        self._update_marker()
        self.scroll_end(animate=False)
        self.anchor()

    def _maybe_prune(self) -> None:
        items = self.items
        heights = [w.outer_size.height for w in items]
        lines = sum(heights)
        if len(items) <= MAX_ITEMS and lines <= MAX_LINES:
            return
        if self.scroll_y < self.max_scroll_y - 1:
            return  # never prune while the user is reading history
        items_over = len(items) - MAX_ITEMS + PRUNE_BATCH if len(items) > MAX_ITEMS else 0
        lines_over = lines - PRUNED_LINES if lines > MAX_LINES else 0
        # What stays must more than fill the view: at the top, the archive comes back.
        keep_lines = 2 * self.size.height
        victims: list[Widget] = []
        for widget, height in zip(items[:-1], heights, strict=False):  # never the newest
            if len(victims) >= items_over and lines_over <= 0:
                break
            if not isinstance(widget, TranscriptItem) or not widget.is_settled:
                break
            if lines - height < keep_lines:
                break
            victims.append(widget)
            lines -= height
            lines_over -= height
        if not victims:
            return
        self._archived.extend(
            ArchivedItem(w.archived(), item_text(w))
            for w in victims
            if isinstance(w, TranscriptItem)
        )
        self._let_go(victims)
        self._update_marker()

    def _let_go(self, widgets: list[Widget]) -> None:
        """Remove `widgets`; once they are gone, say so (the app frees their memory)."""
        self._leaving.update(widgets)
        removed = self.remove_children(widgets)

        async def released() -> None:
            await removed
            # Made in the transcript's own queue: a message made while another node handles
            # one (the screen, for /clear) stops bubbling there, short of the app.
            self.post_message(ItemsReleased())

        self.call_later(released)

    def _update_marker(self) -> None:
        count = len(self._archived)
        self._marker.display = count > 0
        self._marker.update(f"▲ {count} earlier item(s): scroll up to show them")
        later = len(self._below)
        self._below_marker.display = later > 0
        self._below_marker.update(f"▼ {later} later item(s): scroll down to show them")

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self._placing:  # a new window's layout moves the view: not the user scrolling
            return
        if new >= self.max_scroll_y:
            if self._below:
                self.restore_below()
            else:
                self._reading_above = self.unseen_output = False
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
        if self._below:
            self._back_to_the_end()
        self.scroll_end(animate=False)
        self._reading_above = self.unseen_output = False

    def add_prompt(self, prompt: Widget) -> None:
        """What the user just sent, shown at the end (also from a /find window further up),
        the view following from there."""
        self.to_bottom()
        self.add(prompt)
        self.anchor()

    def _scroll_up(self, scroll: Callable[..., object]) -> None:
        # At the top already, scrolling does not move: show the next archived batch instead.
        if self.scroll_y <= 0 and self._archived:
            self.restore_batch(then=scroll)  # ... and the key still scrolls, into the batch
        else:
            scroll(animate=False)

    def restore_batch(self, then: Callable[..., object] | None = None) -> None:
        """The archived batch just above the mounted items, mounted; as many items at the
        bottom, out of view while the user reads up here, go back to the archive below.
        The view stays on what it showed: the batch comes in above it, to be scrolled to
        (at the top, the view would otherwise jump over the whole batch); `then` scrolls
        from there."""
        batch = self._archived[-PRUNE_BATCH:]
        del self._archived[-PRUNE_BATCH:]
        shown = self.items[0] if self.items else None
        offset = shown.virtual_region.y - self.scroll_y if shown is not None else 0
        widgets = [item.build() for item in batch]
        mounted = self.mount(*widgets, after=self._marker)
        self._archive_bottom(len(self.items) - MAX_ITEMS)
        self._update_marker()

        def keep_view() -> None:  # once the batch is in the layout
            if shown is not None and shown.is_attached:
                y = max(0.0, shown.virtual_region.y - offset)
                self.scroll_to(y=y, animate=False, immediate=True)
            if then is not None:
                then(animate=False)

        async def restored() -> None:
            await mounted
            self.call_after_refresh(keep_view)

        self.call_later(restored)

    def restore_below(self) -> None:
        """The archived batch just below the mounted items (after a /find jump), mounted."""
        batch = self._below[:PRUNE_BATCH]
        del self._below[:PRUNE_BATCH]
        widgets = [item.build() for item in batch]
        self.mount(*widgets, before=self._below_marker)
        self._archive_top(len(self.items) - MAX_ITEMS)
        self._update_marker()
        if not self._below:
            self.anchor()  # the end again: new output is followed

    def _archive_top(self, count: int) -> None:
        """Archive the first `count` mounted items, all above the view; the view moves up
        by their height, so what the user reads stays where it is."""
        victims = list(
            itertools.takewhile(
                lambda w: w.virtual_region.bottom <= self.scroll_y, self.items[: max(0, count)]
            )
        )
        archived = _archived_form(victims)
        if not archived:
            return
        height = sum(w.outer_size.height for w in victims)
        self._archived.extend(archived)
        if self._found in victims:
            self._found = None
        self._leaving.update(victims)
        removed = self.remove_children(victims)

        async def released() -> None:
            await removed
            self.set_scroll(None, max(0.0, self.scroll_y - height))
            self.post_message(ItemsReleased())

        self.call_later(released)

    def _archive_bottom(self, count: int) -> None:
        """Archive the last `count` mounted items (never one still changing: a running
        turn's answer or call stays, and so does everything before it)."""
        items = self.items
        victims = items[len(items) - count :] if count > 0 else []
        archived = _archived_form(victims)
        if not archived:
            return
        if not self._below:
            super().anchor(False)  # the window's end is not the end: do not follow it
        self._below[:0] = archived
        if self._found in victims:
            self._found = None
        self._let_go(victims)

    def _mount_window(self, index: int) -> bool:
        """Mount the items around `index` (counted from the oldest, archived ones included)
        and archive the rest on either side: the cost of a window, not of the distance.
        False (nothing done) while a mounted item is still changing (a running turn's)."""
        mounted = self.items
        archived = _archived_form(mounted)
        if archived is None:
            return False
        every = [*self._archived, *archived, *self._below]
        start, end = max(0, index - WINDOW_BEFORE), min(len(every), index + WINDOW_AFTER + 1)
        self._archived, self._below = every[:start], every[end:]
        self._found = None
        self._placing = True
        self._let_go(mounted)
        self.mount(*(item.build() for item in every[start:end]), after=self._marker)
        if self._below:
            super().anchor(False)  # the window's end is not the end: do not follow it
        self._update_marker()
        return True

    def _back_to_the_end(self) -> None:
        """From a window further up, back to the newest items (as a restored session opens).
        Only a window is ever left this way, and its items are all settled (`add`)."""
        mounted = self.items
        every = [*self._archived, *(_archived_form(mounted) or []), *self._below]
        self._archived, self._below = [], []
        self._found = None
        self._let_go(mounted)
        self.load_items(every)

    # -- /find --
    def find(self, query: str, step: int = 0) -> tuple[int, int]:
        """Show where `query` occurs (case-insensitive): the newest occurrence for a new
        query (step 0), else the next older (+1) or newer (-1), round. Returns (position
        from the newest, 1-based, or 0 for none; how many occurrences there are)."""
        mounted = self.items
        texts = [
            *(item.text for item in self._archived),
            *(item_text(w) for w in mounted),
            *(item.text for item in self._below),
        ]
        found = occurrences(texts, query)
        if not found:
            self.clear_found()
            return 0, 0
        position = 0 if step == 0 else (self._find_position + step) % len(found)
        self._find_position = position
        self._show_found(found[position].item)
        return position + 1, len(found)

    def _show_found(self, index: int) -> None:
        """Mark and scroll to the item at `index` (counted from the oldest, archived ones
        included): when it is not mounted, a window of items around it is mounted instead
        (while a turn runs, its items stay: earlier batches come back until it is shown)."""
        mounted = self.items
        first = len(self._archived)
        if not first <= index < first + len(mounted) and not self._mount_window(index):
            while index < len(self._archived):
                self.restore_batch()
        widget = self.items[index - len(self._archived)]
        self.clear_found()
        self._found = widget
        widget.add_class(FOUND)
        if isinstance(widget, UserMessage) and widget.folded:
            widget.expanded = True  # the match may be past the preview
        self.release_anchor()
        self.call_after_refresh(self._scroll_to_found, widget)

    def _scroll_to_found(self, widget: Widget) -> None:
        self.scroll_to_widget(widget, animate=False, top=True, immediate=True)
        self._placing = False

    def clear_found(self) -> None:
        if self._found is not None:
            self._found.remove_class(FOUND)
            self._found = None


def _archived_form(widgets: list[Widget]) -> list[ArchivedItem] | None:
    """The widgets as archived items, or None when one cannot be archived yet (still
    changing, as a running turn's answer does)."""
    archived: list[ArchivedItem] = []
    for widget in widgets:
        if not isinstance(widget, TranscriptItem) or not widget.is_settled:
            return None
        archived.append(ArchivedItem(widget.archived(), item_text(widget)))
    return archived


# -- a restored conversation ------------------------------------------------------------


def restored_items(events: Iterable[ev.TurnEvent]) -> list[ArchivedItem]:
    """One cheap factory (and its text) per item of a replayed conversation, none of them
    built yet: what a live turn shows for the same events, with answers already finished."""
    from co_tui.protocol import events as ev

    items: list[ArchivedItem] = []
    calls: dict[str, ev.ToolCall] = {}
    for event in events:
        match event:
            case ev.TurnStart(prompt=prompt):
                items.append(ArchivedItem(partial(UserMessage, prompt), prompt))
            case ev.TextEnd(content=text) if text.strip():
                items.append(ArchivedItem(partial(markdown_item, text), text))
            case ev.ToolCall() as call:
                calls[call.tool_call_id] = call
            case ev.ToolResult() as result:
                known = calls.get(result.tool_call_id)
                tool = partial(_restored_tool, known, result)
                key_arg = known.key_arg if known is not None else ""
                items.append(ArchivedItem(tool, f"{result.tool_name} {key_arg}"))
            case ev.Status(message=text, level=level):
                items.append(ArchivedItem(partial(Note, text, level), text))
            case ev.Compacted() as compacted:
                said = compacted.describe()
                items.append(ArchivedItem(partial(Note, said, "info"), said))
            case ev.Error(message=text):
                items.append(ArchivedItem(partial(Note, text, "error"), text))
            case ev.TurnEnd(interrupted=True):
                items.append(ArchivedItem(partial(Note, "interrupted", "warning"), "interrupted"))
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
