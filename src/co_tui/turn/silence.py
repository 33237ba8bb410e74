"""ProviderSilence: says when the model is owed an answer and has sent nothing for a while.

While a request is out (the turn's first, or the one after every tool result is in) and no
stream event has arrived for `SHOW_AFTER_S`, it emits `ProviderWaiting(seconds=n)` once a
second; the first event after that emits `ProviderWaiting(seconds=0)`. A tool running is
not the provider's silence: between a tool call and its result nothing is reported. How
long the wait may last is the provider's idle timeout (settings), not this module's call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from pydantic_ai import FunctionToolCallEvent, FunctionToolResultEvent

from co_tui.protocol import events as ev
from co_tui.protocol.frontend import FrontendProtocol

SHOW_AFTER_S = 3.0
TICK_S = 1.0


class ProviderSilence:
    def __init__(self, frontend: FrontendProtocol, session_id: str) -> None:
        self.frontend = frontend
        self.session_id = session_id
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._tools_running = 0
        self._shown = False

    def seen(self, event: object) -> None:
        """A stream event arrived (from the model, or about a tool)."""
        self._last = self._loop.time()
        if isinstance(event, FunctionToolCallEvent):
            self._tools_running += 1
        elif isinstance(event, FunctionToolResultEvent):
            self._tools_running = max(0, self._tools_running - 1)
        self._answered()

    def _answered(self) -> None:
        if self._shown:
            self._shown = False
            self.frontend.emit(ev.ProviderWaiting(session_id=self.session_id, seconds=0))

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            silent = self._loop.time() - self._last
            if self._tools_running == 0 and silent >= SHOW_AFTER_S:
                self._shown = True
                self.frontend.emit(
                    ev.ProviderWaiting(session_id=self.session_id, seconds=int(silent))
                )

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[ProviderSilence]:
        task = asyncio.create_task(self._watch())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self._answered()
