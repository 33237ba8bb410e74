"""Untrusted text reaches the model fenced: `<untrusted source="…">…</untrusted>`.

Which results are untrusted comes from the egress guard's tool table (web pages and search
results, other people's email and Slack messages, MCP results, tools nobody vouched for).
The fence is applied to every model request by `FenceUntrusted` (a capability on the agent
and on every sub-agent), never stored: the history keeps each result as its tool returned
it, the transcript shows it as it is, and a resumed, trimmed or compacted history is fenced
the same way on its next request. The output is deterministic, so prompt caches still hit.

The fence itself (fence_text.py) replaces every spelling of its markers inside, so content
cannot end its fence or open a fake one. The system prompt (prompts/aspects/tool_output.md)
says that fenced content is data, never instructions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import ModelRequestContext

from co_tui.context.tool_calls import tool_args
from co_tui.policy.egress import ToolTable, origin_and_label
from co_tui.policy.fence_text import CLOSE_TAG, FENCE_RULE, REMOVED, fence, neutralise

__all__ = [
    "CLOSE_TAG",
    "FENCE_RULE",
    "REMOVED",
    "FenceUntrusted",
    "fence",
    "fence_messages",
    "fenced_content",
    "neutralise",
]

_SKIPPED_OUTCOMES = ("denied", "interrupted")  # our own messages, not the tool's output


def _is_plain(value: Any) -> bool:
    if isinstance(value, str | int | float | bool) or value is None:
        return True
    if isinstance(value, list | tuple):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return False


def fenced_content(label: str, content: Any) -> Any:
    """A result as the model reads it, fenced. Text and JSON become one fenced string;
    multimodal items (images, files) stay as they are next to fenced text items."""
    if isinstance(content, str):
        return fence(label, content)
    if _is_plain(content):
        return fence(label, json.dumps(content, ensure_ascii=False))
    if isinstance(content, list):
        return [fence(label, c) if isinstance(c, str) else c for c in content]
    return fence(label, str(content))


def fence_messages(messages: Sequence[ModelMessage], table: ToolTable) -> list[ModelMessage]:
    """Copies of `messages` with every untrusted tool result fenced (the rest shared)."""
    calls: dict[str, dict[str, Any]] = {}
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            calls |= {
                p.tool_call_id: tool_args(p) for p in message.parts if isinstance(p, ToolCallPart)
            }
        if not isinstance(message, ModelRequest):
            out.append(message)
            continue
        parts = list(message.parts)
        changed = False
        for i, part in enumerate(parts):
            if not isinstance(part, ToolReturnPart) or part.outcome in _SKIPPED_OUTCOMES:
                continue
            args = calls.get(part.tool_call_id, {})
            origin, label = origin_and_label(part, args, table)
            if origin.untrusted:
                parts[i] = replace(part, content=fenced_content(label, part.content))
                changed = True
        out.append(replace(message, parts=parts) if changed else message)
    return out


@dataclass
class FenceUntrusted(AbstractCapability[Any]):
    """Fences untrusted results in what each request sends; the history is left alone.
    `table` gives the session's tool table (built-ins and its MCP servers) from the deps."""

    table: Callable[[Any], ToolTable]

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        request_context.messages = fence_messages(request_context.messages, self.table(ctx.deps))
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # not spec-serializable (takes a callable)
