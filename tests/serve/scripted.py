"""The model the served app uses in the browser test (named by CO_TUI_TEST_MODEL_FACTORY):
it streams an answer, asks to run one shell command, then confirms."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

MARKER_FILE = "made-in-browser.txt"
STREAMED = ["Streaming ", "from ", "the ", "served ", "app. ", "STREAM-OK"]
FINAL = "The command ran: FINAL-OK"


def _returned(messages: list[ModelMessage]) -> bool:
    last = messages[-1] if messages else None
    return isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts)


async def _stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    if _returned(messages):
        yield FINAL
        return
    for chunk in STREAMED:
        yield chunk
        await asyncio.sleep(0.05)  # a visibly streamed answer
    args = json.dumps({"cmd": f"touch {MARKER_FILE}"})
    yield {1: DeltaToolCall(name="run_shell_command", json_args=args, tool_call_id="sh-1")}


def model() -> FunctionModel:
    return FunctionModel(stream_function=_stream, model_name="scripted")
