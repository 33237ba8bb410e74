"""A batching span processor whose thread sleeps while there is nothing to export.

The SDK's BatchSpanProcessor wakes its worker every `schedule_delay` whether spans are
queued or not: at the 0.2 s the live span viewer needs, five wake-ups a second for as long
as co-tui is open, most of an idle app's CPU. This one waits without a timeout until the
first span of a batch ends, gives the batch `delay_s` to fill, and exports what is queued.
Spans, order and the exporters are the same; `force_flush` and `shutdown` export everything
at once.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Sequence

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter

logger = logging.getLogger(__name__)


class QuietBatchSpanProcessor(SpanProcessor):
    def __init__(
        self, exporter: SpanExporter, *, delay_s: float, max_queue: int, max_batch: int
    ) -> None:
        self._exporter = exporter
        self._delay_s = delay_s
        self._max_queue = max_queue
        self._max_batch = max_batch
        self._queue: deque[ReadableSpan] = deque()
        self._queue_lock = threading.Lock()
        self._export_lock = threading.Lock()  # one export at a time, in order
        self._wake = threading.Event()
        self._stopping = False
        self._dropped = 0
        self._worker = threading.Thread(target=self._run, name="co-tui-span-export", daemon=True)
        self._worker.start()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        with self._queue_lock:
            if self._stopping:
                return
            if len(self._queue) >= self._max_queue:
                self._dropped += 1
                return
            self._queue.append(span)
            first_of_batch = len(self._queue) == 1
        if first_of_batch:
            self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._stopping:
                return
            # Let the batch fill (a turn ends many spans at once), then export it.
            self._wake.clear()
            stopped = self._sleep_unless_stopped(self._delay_s)
            self._export_queued()
            if stopped:
                return

    def _sleep_unless_stopped(self, seconds: float) -> bool:
        if self._wake.wait(seconds):
            return self._stopping
        return False

    def _export_queued(self) -> None:
        with self._export_lock:
            while batch := self._take_batch():
                try:
                    self._exporter.export(batch)
                except Exception:
                    logger.exception("exporting %d spans failed", len(batch))

    def _take_batch(self) -> Sequence[ReadableSpan]:
        with self._queue_lock:
            count = min(self._max_batch, len(self._queue))
            return [self._queue.popleft() for _ in range(count)]

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self._export_queued()
        return self._exporter.force_flush(timeout_millis)

    def shutdown(self) -> None:
        with self._queue_lock:
            if self._stopping:
                return
            self._stopping = True
        self._wake.set()
        self._worker.join()
        self._export_queued()
        if self._dropped:
            logger.warning("%d spans were dropped: the export queue was full", self._dropped)
        self._exporter.shutdown()
