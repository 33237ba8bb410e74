"""Tool calls for small local models: a prompted protocol, held to shape by a GBNF grammar.

llama.cpp's own function-calling chat formats do not work with pydantic-ai here
(`chatml-function-calling` cannot stream an automatic tool choice, constrains plain answers
to nothing, and never renders tool results). So co-tui sends no `tools` to the server: it
describes the tools in a system message and converts tool calls and results in the history
to text. A reply is either an answer or exactly one call:

    <tool_call>{"name": "run_shell_command", "arguments": {"cmd": "ls"}}</tool_call>

The model chooses freely. A reply that starts a call but does not parse is asked for again
under a GBNF grammar (llama.cpp's `grammar` request field) that only admits a well-formed
call of a real tool with its required arguments (optional ones keep their defaults). After
MAX_TOOL_ROUNDS tool results in one turn, calls are no longer parsed, so a small model cannot
loop on calls until the request limit.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

OPEN, CLOSE = "<tool_call>", "</tool_call>"
MAX_TOOL_ROUNDS = 3

_JSON_RULES = r"""
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ["\\/bfnrt] | "\\u" [0-9a-fA-F]{4} )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
integer ::= "-"? ( "0" | [1-9] [0-9]* )
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ( string ": " value ( ", " string ": " value )* )? "}"
array ::= "[" ( value ( ", " value )* )? "]"
"""


def _lit(text: str) -> str:
    """A GBNF string literal."""
    return json.dumps(text)


def _value_rule(schema: dict[str, Any]) -> str:
    if "enum" in schema and all(isinstance(v, str | int | float | bool) for v in schema["enum"]):
        return "( " + " | ".join(_lit(json.dumps(v)) for v in schema["enum"]) + " )"
    kind = schema.get("type")
    if kind in ("string", "number", "integer", "boolean", "null"):
        return str(kind)
    if kind == "array":
        item = _value_rule(schema.get("items") or {})
        return f'( "[" ( {item} ( ", " {item} )* )? "]" )'
    return "value"  # objects, unions, anything else: any JSON value


def _arguments_rule(tool: ToolDefinition) -> str:
    """Required properties in order (optional ones keep their defaults); any JSON otherwise."""
    schema = tool.parameters_json_schema or {}
    props: dict[str, Any] = schema.get("properties") or {}
    required = [name for name in schema.get("required", []) if name in props]
    if schema.get("type") != "object":
        return "object"
    pairs = [f"{_lit(json.dumps(name) + ': ')} {_value_rule(props[name])}" for name in required]
    return '"{" ' + ' ", " '.join(pairs) + ' "}"' if pairs else '"{}"'


def grammar(tools: Sequence[ToolDefinition], allow_text: bool = True) -> str:
    """Either one call of one of `tools` or (when allowed) an answer not starting with "<"."""
    calls = []
    for tool in tools:
        head = _lit(f'{OPEN}{{"name": {json.dumps(tool.name)}, "arguments": ')
        calls.append(f"{head} {_arguments_rule(tool)} {_lit('}' + CLOSE)}")
    root = "root ::= call" + (" | message" if allow_text else "")
    rules = [root, "call ::= " + " | ".join(calls), "message ::= [^<] .*"]
    return "\n".join(rules) + _JSON_RULES


def protocol_prompt(tools: Sequence[ToolDefinition]) -> str:
    lines = ["You can call these tools:"]
    for tool in tools:
        params = (tool.parameters_json_schema or {}).get("properties") or {}
        arg_list = ", ".join(params)
        summary = (tool.description or "").strip().split("\n", 1)[0]  # keep the prompt short
        lines.append(f"- {tool.name}({arg_list}): {summary}")
    example = tools[0]
    first_arg = next(iter((example.parameters_json_schema or {}).get("properties") or {}), "")
    example_args = json.dumps({first_arg: "..."} if first_arg else {})
    lines += [
        "To call a tool, reply with only this line and nothing else:",
        f'{OPEN}{{"name": "{example.name}", "arguments": {example_args}}}{CLOSE}',
        "Otherwise answer the user in plain text.",
    ]
    return "\n".join(lines)


def _call_text(part: ToolCallPart) -> str:
    return f"{OPEN}{json.dumps({'name': part.tool_name, 'arguments': part.args_as_dict()})}{CLOSE}"


def _request_part(part: ModelRequestPart) -> ModelRequestPart:
    if isinstance(part, ToolReturnPart):
        return UserPromptPart(f"Result of {part.tool_name}:\n{part.model_response_str()}")
    if isinstance(part, RetryPromptPart):
        return UserPromptPart(part.model_response())
    return part


def _response_part(part: ModelResponsePart) -> ModelResponsePart | None:
    if isinstance(part, ToolCallPart):
        return TextPart(_call_text(part))
    if isinstance(part, TextPart):
        return part
    return None  # thinking and provider-specific parts mean nothing to the local model


def to_text_history(
    messages: Sequence[ModelMessage], tools: Sequence[ToolDefinition]
) -> list[ModelMessage]:
    """The history as plain chat: tool calls and results become text; the protocol goes first."""
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            out.append(replace(message, parts=[_request_part(p) for p in message.parts]))
        else:
            parts = [q for p in message.parts if (q := _response_part(p)) is not None]
            out.append(replace(message, parts=parts or [TextPart("")]))
    if tools:
        for i, message in enumerate(out):
            if isinstance(message, ModelRequest):
                protocol = SystemPromptPart(protocol_prompt(tools))
                out[i] = replace(message, parts=[protocol, *message.parts])
                break
    return out


def tool_rounds(messages: Sequence[ModelMessage]) -> int:
    """How many tool results the model has had since the user's last prompt."""
    rounds = 0
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        if any(isinstance(p, UserPromptPart) for p in message.parts):
            break
        if any(isinstance(p, ToolReturnPart | RetryPromptPart) for p in message.parts):
            rounds += 1
    return rounds


@dataclass
class ParsedCall:
    tool_name: str
    args: dict[str, Any]
    tool_call_id: str


def parse_call(text: str, tool_names: Sequence[str]) -> ParsedCall | None:
    """The call in `text`, or None when it is not a complete call of a known tool."""
    body = text.strip()
    if not (body.startswith(OPEN) and body.endswith(CLOSE)):
        return None
    try:
        data = json.loads(body[len(OPEN) : -len(CLOSE)])
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("name") not in tool_names:
        return None
    args = data.get("arguments")
    if not isinstance(args, dict):
        return None
    return ParsedCall(str(data["name"]), args, f"call_{uuid.uuid4().hex[:16]}")


class CallDecoder:
    """Splits a streamed reply into answer text (passed through) or one buffered call.

    The grammar keeps answers from starting with "<", so the first characters decide.
    """

    def __init__(self, tool_names: Sequence[str]) -> None:
        self.tool_names = list(tool_names)
        self.buffer = ""
        self.mode: str | None = None  # None (undecided) | "text" | "call"

    def feed(self, delta: str) -> Iterator[str]:
        """Yields text to show now."""
        if self.mode == "text":
            yield delta
            return
        self.buffer += delta
        if self.mode == "call":
            return
        head = self.buffer.lstrip()
        if not head or (len(head) < len(OPEN) and OPEN.startswith(head)):
            return
        if head.startswith(OPEN):
            self.mode = "call"
            return
        self.mode = "text"
        text, self.buffer = self.buffer, ""
        yield text

    def finish(self) -> tuple[str, ParsedCall | None]:
        """(text still to show, the call). A call that does not parse is shown as text."""
        if self.mode == "text":
            return "", None
        call = parse_call(self.buffer, self.tool_names)
        return ("", call) if call else (self.buffer, None)
