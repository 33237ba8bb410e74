"""One streamed answer in the transcript.

Streaming cost stays flat: finished blocks are rendered once into lines (it is a
RenderedLines) and only the unfinished tail is rendered again, as its last lines. Deltas are
buffered and applied at most every FLUSH_INTERVAL (longer when rendering is slow, see
`streaming.flush_interval`) by one pump task per message; what they finish is committed in
pieces of about COMMIT_CHARS, the event loop served between them. Each piece numbers its
code blocks on from the pieces before it, so a label never changes once shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from functools import partial
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widget import AwaitMount, Widget

from co_tui.tui.render.streaming import COMMIT_CHARS, flush_interval, split_blocks, split_finished
from co_tui.tui.widgets.items import Note, TranscriptItem, WidgetFactory, markdown, markdown_item
from co_tui.tui.widgets.lines import RenderedLines

if TYPE_CHECKING:
    from co_tui.tui.render.markdown import TranscriptMarkdown

# The pause between two pieces is a timer, not `sleep(0)`: after `sleep(0)` this task runs
# again before the tasks whose timers fell due meanwhile (the screen's refresh, a key being
# handled), which wake a loop pass later, after the next piece.
PIECE_PAUSE_S = 0.001


class AssistantMessage(RenderedLines, TranscriptItem):
    """One streamed answer. `feed` is cheap; a pump applies buffered text to the document.
    It is one widget, not a container of its lines: each layout pass reflows every widget
    of the transcript."""

    def __init__(self) -> None:
        super().__init__(classes="assistant-message")
        self._pending: list[str] = []
        self._parts: list[str] = []  # the whole answer, for copy and for freezing
        self._live_text = ""  # the unfinished tail, shown after the committed blocks
        self._wakeup = asyncio.Event()
        self._finished = asyncio.Event()
        self._finishing = False
        self._settled = False
        self.interrupted = False
        self.committed_blocks = 0
        self._code_blocks_committed = 0  # numbered code blocks in the committed pieces
        self._done = asyncio.Event()

    @property
    def text(self) -> str:
        return "".join(self._parts)

    @property
    def is_settled(self) -> bool:
        return self._settled

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
            self._note_interrupted()

    async def wait_settled(self) -> None:
        await self._done.wait()

    async def _pump(self) -> None:
        try:
            while True:
                await self._wakeup.wait()
                self._wakeup.clear()
                closing = self._finishing
                render_s = 0.0
                if self._pending:
                    chunk = "".join(self._pending)
                    self._pending.clear()
                    render_s = await self._apply(chunk, final=closing)
                if closing:
                    break
                # Sleep out the interval, unless the answer finishes meanwhile.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._finished.wait(), flush_interval(render_s))
            await self._settle()
        finally:
            self._settled = True
            self.lines_settled()
            self._done.set()

    async def _apply(self, chunk: str, final: bool) -> float:
        """Show `chunk` after what came before; returns the seconds spent rendering."""
        text = self._live_text + chunk
        finished, reopen, rest = split_finished(text)
        render_s = 0.0
        with self.batch_changes():  # one layout for the whole flush
            if finished and (len(finished) >= COMMIT_CHARS or reopen):
                for index, piece in enumerate(split_blocks(finished)):
                    if index:
                        await asyncio.sleep(PIECE_PAUSE_S)  # the screen and input are served
                    started = time.perf_counter()
                    self._commit(piece)
                    render_s += time.perf_counter() - started
                if reopen:  # the code block cut in two goes on in the tail, same number
                    self._code_blocks_committed -= 1
                self._live_text = reopen + rest
                if not final and self._live_text:
                    await asyncio.sleep(PIECE_PAUSE_S)  # and before the tail is rendered
            else:
                self._live_text = text
            if not final:
                started = time.perf_counter()
                self.set_tail(self._block(self._live_text) if self._live_text else None)
                render_s += time.perf_counter() - started
        return render_s

    async def _settle(self) -> None:
        """The answer is over: the tail becomes a committed block, in the same lines."""
        tail = self._live_text
        if tail.strip():
            self._commit(tail, replacing_tail=True)
        else:
            self.set_tail(None)
        self._live_text = ""
        if self.interrupted:
            await self._note_interrupted()
        if not self.text.strip() and not self.interrupted:
            self.display = False

    def _commit(self, text: str, *, replacing_tail: bool = False) -> None:
        block = markdown(text, self._code_blocks_committed + 1)
        self.add(self._spaced(block), replacing_tail=replacing_tail)
        self.committed_blocks += 1
        self._code_blocks_committed += block.code_block_count

    def _note_interrupted(self) -> AwaitMount:
        """Says so under the answer, as the transcript's next item."""
        transcript = self.parent
        assert isinstance(transcript, Widget)  # only a mounted answer settles or is marked
        return transcript.mount(Note("interrupted", "warning"), after=self)

    def _block(self, text: str) -> RenderableType:
        return self._spaced(markdown(text, self._code_blocks_committed + 1))

    def _spaced(self, block: TranscriptMarkdown) -> RenderableType:
        # Separately rendered pieces need the blank line Markdown puts between blocks, unless
        # Rich's already opens this one with it.
        if self.committed_blocks and not block.opens_with_a_blank_line:
            return Group(Text(""), block)
        return block

    def archived(self) -> WidgetFactory:
        return partial(markdown_item, self.text)
