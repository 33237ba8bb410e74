"""The conversation of the `co-tui serve` browser test: a visibly streamed answer, a request to
run one shell command, then a confirmation once it ran. `replies` is that conversation as the
fake OpenAI server's script (the served app is configured to use that server); `_stream`, the
same as a FunctionModel's stream, for the app's pilot tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from tests.servers.fake_openai import Reply, text, text_then_tool_call

MARKER_FILE = "made-in-browser.txt"
STREAMED = ["Streaming ", "from ", "the ", "served ", "app. ", "STREAM-OK"]
STREAM_DELAY_S = 0.05  # between two pieces of the answer: visibly streamed
COMMAND = f"touch {MARKER_FILE}"
FINAL = "The command ran: FINAL-OK"


def replies() -> list[Reply]:
    """The answer streamed in as many pieces as STREAMED, the command, then FINAL."""
    streamed = text_then_tool_call(
        "".join(STREAMED),
        "run_shell_command",
        chunks=len(STREAMED),
        delay_s=STREAM_DELAY_S,
        cmd=COMMAND,
    )
    return [streamed, text(FINAL)]


def _returned(messages: list[ModelMessage]) -> bool:
    last = messages[-1] if messages else None
    return isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts)


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    if _returned(messages):
        yield FINAL
        return
    for chunk in STREAMED:
        yield chunk
        await asyncio.sleep(STREAM_DELAY_S)
    args = json.dumps({"cmd": COMMAND})
    yield {1: DeltaToolCall(name="run_shell_command", json_args=args, tool_call_id="sh-1")}
