"""What a tool call shows the user: `ToolDisplay`.

A tool returns `ToolReturn(return_value=..., metadata=ToolDisplay(...))`: the model reads
the return value, the app reads this value from the `ToolReturnPart`'s metadata (turn/stream.py
live, store/ when a session is loaded). The model never receives the metadata.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolDisplay:
    """`text` is shown verbatim under the call's line in the transcript. `error` marks a
    terminal failure (the model is told to go another way): the call shows as failed.
    `count`: how many items the text lists, when the tool counted them."""

    text: str
    error: bool = False
    count: int | None = None
