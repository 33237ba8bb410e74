"""The egress guard: what an outbound call may carry out, and when it must ask.

Pure functions over the context, so a resumed or compacted session is judged by what its
history holds, nothing else. Where each piece of context came from is origins.py's answer
(the one place); this module decides:

- `egress_review(tool_name, args, sources, table, typed)`: an outbound call must wait for
  the user when untrusted content is in the context (it may be following it), or when its
  arguments carry private text the user did not type (carried.py: in any encoding found).
  The review says why, from where, and what is carried. None: `web_policy` and the rules
  decide as for any call. Approve-all never covers a review: the turn asks anyway.

`ToolTable` is the session's tools by name, each a `ToolSpec` (protocol/tool_spec.py): its `Origin`,
how to label its results, and where it sends data. This module names no tool:
`BUILTIN_TABLE` holds the built-in tools' specs (policy/tool_specs.py), and `ToolTable.with_specs`
adds a connected MCP server's tools (`mcp_tool_spec`: untrusted, outbound unless the server
is local). A tool the table does not know counts as untrusted, and as outbound: a result
nobody vouched for is treated like one from the internet, a call nobody described may send
anything anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import Any

from pydantic_ai.messages import ModelMessage

from co_tui.context.origins import Source, iter_sources, origin_and_label
from co_tui.policy.carried import Carried, find_carried
from co_tui.policy.tool_specs import BUILTIN_SPECS
from co_tui.protocol.frontend import ApprovalRequest
from co_tui.protocol.prompt_piece import PromptPiece
from co_tui.protocol.tool_spec import UNKNOWN_TOOL, Origin, OriginKind, ToolSpec

__all__ = [
    "BUILTIN_TABLE",
    "ORIGINS",
    "OUTBOUND",
    "EgressReview",
    "OriginKind",
    "Source",
    "ToolTable",
    "context_sources",
    "egress_review",
    "origin_and_label",
]

UNKNOWN_DESTINATION = "a tool co-tui does not know"


@dataclass(frozen=True)
class ToolTable:
    """The session's tools by name (their specs): the built-in ones, plus any MCP server's."""

    specs: Mapping[str, ToolSpec] = field(default_factory=lambda: BUILTIN_SPECS)

    def spec(self, tool_name: str) -> ToolSpec | None:
        return self.specs.get(tool_name)

    def origin(self, tool_name: str) -> Origin:
        spec = self.specs.get(tool_name)
        return spec.origin if spec is not None else UNKNOWN_TOOL

    def label(self, tool_name: str, args: Mapping[str, Any], content: Any) -> str:
        spec = self.specs.get(tool_name)
        return spec.result_label(args, content) if spec is not None else f"result of {tool_name}"

    @cached_property
    def origins(self) -> Mapping[str, Origin]:
        return MappingProxyType({name: spec.origin for name, spec in self.specs.items()})

    @cached_property
    def outbound(self) -> Mapping[str, str]:
        """Outbound tools: what they send data to."""
        return MappingProxyType(
            {n: s.outbound or s.destination_of({}) for n, s in self.specs.items() if s.is_outbound}
        )

    def is_outbound(self, tool_name: str) -> bool:
        spec = self.specs.get(tool_name)
        return spec is None or spec.is_outbound

    def destination(self, tool_name: str, args: Mapping[str, Any]) -> str:
        spec = self.specs.get(tool_name)
        return spec.destination_of(args) if spec is not None else UNKNOWN_DESTINATION

    def with_specs(self, specs: Iterable[ToolSpec]) -> ToolTable:
        return ToolTable(MappingProxyType({**self.specs, **{s.name: s for s in specs}}))


BUILTIN_TABLE = ToolTable()
# Every built-in tool (tests/security/test_egress_guard.py checks none is missing).
ORIGINS: Mapping[str, Origin] = BUILTIN_TABLE.origins
OUTBOUND: Mapping[str, str] = BUILTIN_TABLE.outbound


def context_sources(
    messages: Sequence[ModelMessage],
    table: ToolTable = BUILTIN_TABLE,
    instructions: Iterable[PromptPiece] = (),
) -> list[Source]:
    """Every private or untrusted piece of the context (origins.py), in order."""
    return list(iter_sources(messages, table, instructions))


@dataclass(frozen=True)
class EgressReview:
    """Why an outbound call waits for the user: what it may follow, and what it carries."""

    tool_name: str
    destination: str  # "example.com", "Slack (#general)", "the MCP server 'docs'"
    untrusted: tuple[Source, ...]  # untrusted content in the context
    carried: tuple[Carried, ...]  # private text in the arguments the user did not type
    reason: str  # for the dialog and the decision line

    @property
    def labels(self) -> tuple[str, ...]:
        """The sources in question, the untrusted ones first, each once."""
        found = [s.label for s in self.untrusted] + [c.label for c in self.carried]
        return tuple(dict.fromkeys(found))

    @property
    def highlights(self) -> tuple[str, ...]:
        """What the arguments carry, as found (decoded)."""
        return tuple(c.text for c in self.carried)

    def request(self, request: ApprovalRequest) -> ApprovalRequest:
        """`request` with this review's reason, sources and what it carries."""
        return replace(
            request,
            reason=self.reason,
            sources=self.labels,
            highlights=self.highlights,
            carried=tuple(c.line() for c in self.carried),
            egress=True,
        )


def _count(sources: Sequence[Source]) -> str:
    count = len({s.label for s in sources})
    return f"{count} source{'s' if count != 1 else ''}"


def _reason(destination: str, untrusted: Sequence[Source], carried: Sequence[Carried]) -> str:
    why = []
    if untrusted:
        why.append(f"the conversation holds untrusted content ({_count(untrusted)})")
    if carried:
        labels = list(dict.fromkeys(c.label for c in carried))
        what = "1 part" if len(carried) == 1 else f"{len(carried)} parts"
        more = f" and {len(labels) - 1} more" if len(labels) > 1 else ""
        why.append(f"it carries private text you did not type ({what}, from {labels[0]}{more})")
    return (
        f"egress guard: this sends data to {destination} while {' and '.join(why)}; "
        "check that nothing leaves that should not (approve-all does not cover this)"
    )


def egress_review(
    tool_name: str,
    args: Mapping[str, Any],
    sources: Sequence[Source],
    table: ToolTable = BUILTIN_TABLE,
    typed: Sequence[str] = (),
) -> EgressReview | None:
    """The review of an outbound call (see the module); None when the call sends nothing
    out, or follows nothing untrusted and carries nothing private."""
    if not table.is_outbound(tool_name):
        return None
    untrusted = tuple(s for s in sources if s.origin.untrusted)
    private = [s for s in sources if s.origin.private]
    carried = find_carried(args, private, typed) if private else ()
    if not untrusted and not carried:
        return None
    destination = table.destination(tool_name, args)
    reason = _reason(destination, untrusted, carried)
    return EgressReview(tool_name, destination, untrusted, carried, reason)
