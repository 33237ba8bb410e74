"""TuiFrontend: the orchestrator's FrontendProtocol for the app.

It posts: every event goes to the chat screen as a `SessionEvent` message, and an approval
as an `ApprovalAsked` whose future the screen resolves with the user's decision. It touches
no widget; the screen routes each event to the widgets that show it (tui/display.py).

A fast stream sends thousands of deltas; a message each would cost more than drawing them.
Deltas are posted at most once a frame (`DELTA_INTERVAL`): those that arrive in between are
joined into one (same kind, same session, in order); of a running command's output
(`ToolOutput`, same call) only the latest is posted. The first delta after a quiet frame
goes out on the next pass of the event loop, and any other event first sends the deltas
before it, so nothing is reordered or held back longer than a frame.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING

from co_tui.protocol.events import TextDelta, ThinkingDelta, ToolOutput
from co_tui.tui.messages import ApprovalAsked, SessionEvent

if TYPE_CHECKING:
    from textual.screen import Screen

    from co_tui.protocol.events import TurnEvent
    from co_tui.protocol.frontend import ApprovalReply, ApprovalRequest

Delta = TextDelta | ThinkingDelta | ToolOutput
DELTA_INTERVAL = 1 / 60  # seconds: the screen draws no faster than this anyway


class TuiFrontend:
    def __init__(self, chat: Screen[None]) -> None:
        self.chat = chat
        self._deltas: list[Delta] = []
        self._flush: asyncio.TimerHandle | asyncio.Handle | None = None
        self._flushed_at = 0.0

    def emit(self, event: TurnEvent) -> None:
        if isinstance(event, TextDelta | ThinkingDelta | ToolOutput):
            self._deltas.append(event)
            if self._flush is None:
                loop = asyncio.get_running_loop()
                wait = self._flushed_at + DELTA_INTERVAL - loop.time()
                self._flush = (
                    loop.call_later(wait, self.flush) if wait > 0 else loop.call_soon(self.flush)
                )
            return
        self.flush()
        self.chat.post_message(SessionEvent(event))

    def flush(self) -> None:
        """Post the waiting deltas, each run of one kind and session as one."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if not self._deltas:
            return
        self._flushed_at = asyncio.get_running_loop().time()
        deltas, self._deltas = self._deltas, []
        run: list[Delta] = []
        for delta in deltas:
            if run and not _same_stream(delta, run[0]):
                self._post_run(run)
                run = []
            run.append(delta)
        if run:
            self._post_run(run)

    def _post_run(self, run: list[Delta]) -> None:
        first, last = run[0], run[-1]
        if isinstance(first, ToolOutput):
            self.chat.post_message(SessionEvent(last))  # the latest lines stand for the rest
            return
        if len(run) > 1:
            joined = "".join(delta.content for delta in run if not isinstance(delta, ToolOutput))
            first = replace(first, content=joined)
        self.chat.post_message(SessionEvent(first))

    async def prompt_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self.flush()
        reply: asyncio.Future[ApprovalReply] = asyncio.get_running_loop().create_future()
        self.chat.post_message(ApprovalAsked(request, reply))
        try:
            return await reply
        finally:
            reply.cancel()  # cancelled turn: the dialog's answer, if any, goes nowhere


def _same_stream(delta: Delta, other: Delta) -> bool:
    """Deltas that join: same kind, same session (and, for output, same call)."""
    if type(delta) is not type(other) or delta.session_id != other.session_id:
        return False
    return not isinstance(delta, ToolOutput) or (
        isinstance(other, ToolOutput) and delta.tool_call_id == other.tool_call_id
    )
