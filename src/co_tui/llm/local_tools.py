"""The conversation as plain chat for the embedded model: tool calls and results as text.

llama.cpp's own function-calling chat formats do not work with pydantic-ai here
(`chatml-function-calling` cannot stream an automatic tool choice, constrains plain answers
to nothing, and never renders tool results). So co-tui sends no `tools` to the server: which
tool to call and its arguments are settled by local_strategy, and the history reaches the
model as ordinary messages. A call reads as a line the assistant wrote, its result as a
message to it:

    assistant: [called run_shell_command {"cmd": "ls"}]
    user:      Result of run_shell_command:
               notes.txt ...
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponsePart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)


def call_text(part: ToolCallPart) -> str:
    return f"[called {part.tool_name} {json.dumps(part.args_as_dict(), ensure_ascii=False)}]"


def _request_part(part: ModelRequestPart) -> ModelRequestPart:
    if isinstance(part, ToolReturnPart):
        return UserPromptPart(f"Result of {part.tool_name}:\n{part.model_response_str()}")
    if isinstance(part, RetryPromptPart):
        return UserPromptPart(part.model_response())
    return part


def _response_part(part: ModelResponsePart) -> ModelResponsePart | None:
    if isinstance(part, ToolCallPart):
        return TextPart(call_text(part))
    if isinstance(part, TextPart):
        return part
    return None  # thinking and provider-specific parts mean nothing to the local model


def to_text_history(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history as plain chat: tool calls and results become text."""
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            out.append(replace(message, parts=[_request_part(p) for p in message.parts]))
        else:
            parts = [q for p in message.parts if (q := _response_part(p)) is not None]
            out.append(replace(message, parts=parts or [TextPart("")]))
    return out
