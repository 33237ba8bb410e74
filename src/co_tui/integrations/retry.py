"""RetryPolicy: how the Google and Slack tools retry a transient failure (CoDeps.retry).

Apart from tools/errors.py, which applies it, so that CoDeps can hold one without
importing pydantic-ai.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3  # total tries, the first included
    base_delay: float = 1.0
    max_delay: float = 30.0  # a Retry-After longer than this is reported, not waited out
    sleep: Sleep = field(default=asyncio.sleep, compare=False)

    def delay(self, retry_number: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, retry_after)
        backoff = self.base_delay * (2 ** (retry_number - 1))
        return min(self.max_delay, backoff * (1 + random.random() * 0.1))
