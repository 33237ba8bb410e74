"""What the embedded model is shown to fill in a tool's arguments, and the schema that holds it.

The model writes the arguments as JSON under the tool's own JSON schema (sent as the request's
`response_format`, which the engine turns into a grammar): any value the schema allows, not
only words of the request. Strings are bounded so a small model cannot ramble into the token
cap and leave the JSON unfinished.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic_ai.tools import ToolDefinition
from pydantic_core import from_json

from co_tui.llm.local.repetition import one_pass

MAX_STRING_CHARS = 1000


def _bounded(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _bounded(v) for k, v in schema.items()}
        if out.get("type") == "string" and "enum" not in out:
            out["maxLength"] = min(int(out.get("maxLength", MAX_STRING_CHARS)), MAX_STRING_CHARS)
        return out
    if isinstance(schema, list):
        return [_bounded(v) for v in schema]
    return schema


def arguments_schema(tool: ToolDefinition) -> dict[str, Any]:
    """The tool's parameters schema with its strings bounded."""
    schema = copy.deepcopy(tool.parameters_json_schema or {"type": "object", "properties": {}})
    bounded: dict[str, Any] = _bounded(schema)
    bounded.setdefault("type", "object")
    return bounded


def summary(tool: ToolDefinition) -> str:
    """The first paragraph of a tool's description, on one line."""
    text = (tool.description or "").strip().split("\n\n", 1)[0]
    return " ".join(text.split())


def _parameter_lines(tool: ToolDefinition) -> list[str]:
    schema = tool.parameters_json_schema or {}
    required = set(schema.get("required") or ())
    lines = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type", "value")
        need = "required" if name in required else f"optional, default {prop.get('default')!r}"
        about = " ".join(str(prop.get("description") or "").split())
        lines.append(f"- {name} ({kind}, {need}){': ' + about if about else ''}")
    return lines


def arguments_prompt(tool: ToolDefinition, request: str, feedback: str = "") -> str:
    """The message after which the model writes `tool`'s arguments as JSON."""
    parts = [
        f"Use the tool {tool.name}: {summary(tool)}",
        "Its parameters:",
        *(_parameter_lines(tool) or ["(none)"]),
        f"My request: {request}",
    ]
    if feedback:
        parts.append(f"The last try was sent back: {feedback}")
    parts.append(
        "Write the arguments as one JSON object, with the values my request needs "
        '(for example {"name": "value"}).'
    )
    return "\n".join(parts)


def parse_arguments(text: str, *, loop_cut: bool = False) -> dict[str, Any] | str:
    """The JSON object the model wrote, or its raw text when it is not one (validation then
    sends it back for another try). When the engine was stopped in a loop (`loop_cut`), the
    loop is kept once and the JSON closed where that pass ends: a string or list left open
    ends there, a key without a value is left out (and a required one is asked for again)."""
    try:
        value = json.loads(text)
    except ValueError:
        if not loop_cut:
            return text
        try:
            value = from_json(
                one_pass(text, letters_only=False) or text, allow_partial="trailing-strings"
            )
        except ValueError:
            return text
    return value if isinstance(value, dict) else text
