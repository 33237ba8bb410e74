"""Where every piece of the model's context came from: the one place the egress guard and the
fence read origins from, never from text.

A piece of context is a `Source` when it is private (the user's own data: their knowledge,
memories, notes, files, mail, attachments) or untrusted (written by someone else: web pages,
other people's mail and Slack messages, MCP servers, a project the user has not trusted):
- the parts of the system prompt someone other than co-tui wrote, each with the origin the
  assembly gave it (prompts/assembly.py `PromptPiece`: the user's knowledge is private, an
  untrusted project's instructions and knowledge are untrusted);
- files attached to a prompt (co_tui/context/attachments.py puts each in a `TextContent` whose
  metadata names it; a prompt stored before that carries them as text blocks);
- tool results and tool errors, with their tool's origin (its spec: policy/tool_specs.py; an MCP
  server's tools are untrusted; a tool nobody knows is untrusted). An error counts: a page's
  HTTP reason phrase, an MCP result shaped like an error, are someone else's words. Only a
  denied or interrupted call's text is co-tui's own;
- summaries of earlier turns: private and untrusted (they may hold anything those read).

`typed_texts` is what the user typed into the conversation: theirs to send.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextContent,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_tui.context.attachments import Attached, attached_blocks, attachment_of, typed_text
from co_tui.context.summaries import SUMMARY_PREFIX
from co_tui.context.tool_calls import tool_args
from co_tui.protocol.prompt_piece import PromptPiece
from co_tui.protocol.tool_spec import NEUTRAL, Origin, OriginKind, one_line, result_field

SUMMARY = Origin(OriginKind.SUMMARY, private=True, untrusted=True)
ATTACHED = Origin(OriginKind.ATTACHMENT, private=True, untrusted=False)
_OWN_OUTCOMES = ("denied", "interrupted")  # co-tui's own message, not the tool's output


@dataclass(frozen=True)
class Source:
    """One private or untrusted piece of the context."""

    label: str  # "note Projects/plan.md", "email from alice@example.com", "web page https://…"
    origin: Origin
    tool_call_id: str
    text: str = field(repr=False)  # what the model read, for the search of what is carried


class OriginTable(Protocol):
    """What the context needs to know of the session's tools (egress.ToolTable is one)."""

    def origin(self, tool_name: str) -> Origin: ...

    def label(self, tool_name: str, args: Mapping[str, Any], content: Any) -> str: ...


def _leaves(value: Any, out: list[str], depth: int = 0) -> None:
    if isinstance(value, str):
        out.append(value)
    elif depth < 8 and isinstance(value, dict):
        for item in value.values():
            _leaves(item, out, depth + 1)
    elif depth < 8 and isinstance(value, list | tuple):
        for item in value:
            _leaves(item, out, depth + 1)


def content_text(content: Any) -> str:
    """A result's strings, one per line (dict keys and numbers left out)."""
    parts: list[str] = []
    _leaves(content, parts)
    return "\n".join(parts)


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _delegate_origin(content: Any) -> tuple[Origin, str] | None:
    """A sub-agent's report is private/untrusted when what it read was (agent/delegate.py
    lists those sources in the report)."""
    private = _strings(result_field(content, "private_sources"))
    untrusted = _strings(result_field(content, "untrusted_sources"))
    if not (private or untrusted):
        return None
    origin = Origin(OriginKind.SUBAGENT, private=bool(private), untrusted=bool(untrusted))
    labels = list(dict.fromkeys(private + untrusted))
    shown = ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
    return origin, f"sub-agent report (it read {one_line(shown)})"


def origin_and_label(
    part: ToolReturnPart, args: Mapping[str, Any], table: OriginTable
) -> tuple[Origin, str]:
    """Where a tool result comes from, and its label ("note a.md", "web page https://…")."""
    origin = table.origin(part.tool_name)
    if origin.kind is OriginKind.SUBAGENT:
        return _delegate_origin(part.content) or (NEUTRAL, "")
    if not origin.is_source:
        return origin, ""
    return origin, table.label(part.tool_name, args, part.content)


def source_of(part: ToolReturnPart, args: Mapping[str, Any], table: OriginTable) -> Source | None:
    """The source a tool result (or error) is; None when it holds nothing private or
    untrusted, or is co-tui's own message (a denied or interrupted call)."""
    if part.outcome in _OWN_OUTCOMES:
        return None
    origin, label = origin_and_label(part, args, table)
    if not origin.is_source:
        return None
    return Source(label, origin, part.tool_call_id, content_text(part.content))


def _is_summary(part: UserPromptPart) -> bool:
    return isinstance(part.content, str) and part.content.startswith(SUMMARY_PREFIX)


def _attached(found: Attached) -> Source:
    return Source(f"attached {found.kind} {found.path}", ATTACHED, "", found.text)


def _prompt_sources(part: UserPromptPart) -> Iterator[Source]:
    content = part.content
    if isinstance(content, str):
        if _is_summary(part):
            yield Source("summary of the earlier conversation", SUMMARY, "", content)
        else:  # stored before attachments were tagged: their blocks are in the text
            yield from (_attached(block) for block in attached_blocks(content))
        return
    for item in content:
        if isinstance(item, TextContent) and (found := attachment_of(item)) is not None:
            yield _attached(found)


def instruction_sources(pieces: Iterable[PromptPiece]) -> Iterator[Source]:
    """The system prompt's private or untrusted parts."""
    for piece in pieces:
        if piece.origin.is_source:
            yield Source(piece.label, piece.origin, "", piece.text)


def iter_sources(
    messages: Sequence[ModelMessage],
    table: OriginTable,
    instructions: Iterable[PromptPiece] = (),
) -> Iterator[Source]:
    """Every private or untrusted piece of the context, the system prompt's first."""
    yield from instruction_sources(instructions)
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        if isinstance(message, ModelResponse):
            calls |= {
                p.tool_call_id: tool_args(p) for p in message.parts if isinstance(p, ToolCallPart)
            }
            continue
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                source = source_of(part, calls.get(part.tool_call_id, {}), table)
                if source is not None:
                    yield source
            elif isinstance(part, UserPromptPart):
                yield from _prompt_sources(part)


def typed_texts(messages: Sequence[ModelMessage]) -> list[str]:
    """What the user typed into the conversation (attached files and summaries left out)."""
    typed: list[str] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if not isinstance(part, UserPromptPart) or _is_summary(part):
                continue
            if isinstance(part.content, str):
                typed.append(typed_text(part.content))
            else:
                typed += [item for item in part.content if isinstance(item, str)]
    return typed
