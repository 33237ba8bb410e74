"""The conversation as plain chat for the embedded model: tool calls and results as text.

llama.cpp's own function-calling chat formats do not work with pydantic-ai here
(`chatml-function-calling` cannot stream an automatic tool choice, constrains plain answers
to nothing, and never renders tool results). So co-tui sends no `tools` to the server: which
tool to call and its arguments are settled by local_strategy, and the history reaches the
model as ordinary messages. A call and its result read as one message to the model (a
small model shown the calls "it" made imitates them in its answers):

    user: which files sit in this folder?
    user: Output of run_shell_command {"cmd": "ls"}:
          ```
          notes.txt ...
          ```
          Answer my request with this output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

# Measured on ten tool results (the answer quotes the output): 8 of 10 with this cue after
# the fenced output, 6-7 without it or with the output inside the user's own message.
ANSWER_CUE = "Answer my request with this output."


def call_text(part: ToolCallPart) -> str:
    return f"{part.tool_name} {json.dumps(part.args_as_dict(), ensure_ascii=False)}"


def _request_part(part: ModelRequestPart, calls: dict[str, ToolCallPart]) -> ModelRequestPart:
    if isinstance(part, ToolReturnPart | RetryPromptPart):
        call = calls.get(part.tool_call_id or "")
        what = call_text(call) if call is not None else part.tool_name
        text = (
            part.model_response()
            if isinstance(part, RetryPromptPart)
            else part.model_response_str()
        )
        return UserPromptPart(f"Output of {what}:\n```\n{text}\n```\n{ANSWER_CUE}")
    return part


def to_text_history(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history as plain chat: a tool's result becomes a message naming the call; the
    call itself is left out (a small model shown calls it made imitates them as text)."""
    calls = {
        p.tool_call_id: p
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    }
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            out.append(replace(message, parts=[_request_part(p, calls) for p in message.parts]))
            continue
        texts = [p for p in message.parts if isinstance(p, TextPart) and p.content.strip()]
        if texts:  # thinking, calls and provider-specific parts mean nothing to it
            out.append(replace(message, parts=texts))
    return out
