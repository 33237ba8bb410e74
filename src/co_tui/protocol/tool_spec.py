"""A tool described as data: `ToolSpec`.

Where a tool comes from (its group in /tools), whether every call waits for the user, which
argument names a call in one line, and what the egress guard needs to know: where its
results come from (`Origin`: private, untrusted), how to name one of its results for the
user, whether a call sends data off this machine and to where, and why it asks. The
orchestrator reads specs and names no tool: adding a tool means writing its spec next to it
(built-in tools: policy/tool_specs.py; an MCP server's tools: `mcp_tool_spec`), never editing
policy/ or turn/.

This module imports nothing from co_tui, so the tools and the orchestrator can both use it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

MAX_LABEL_CHARS = 120


class OriginKind(StrEnum):
    NOTE = "note"
    FILE = "file"  # shell output: the user's own files
    DRIVE = "drive"
    CALENDAR = "calendar"
    MEMORY = "memory"
    EMAIL = "email"
    SLACK = "slack"
    WEB = "web"
    MCP = "mcp"
    SUBAGENT = "sub-agent"
    SUMMARY = "summary"
    KNOWLEDGE = "knowledge"  # the user's knowledge files, in the system prompt
    PROJECT = "project"  # a project's instructions and knowledge, in the system prompt
    ATTACHMENT = "attachment"  # a file or note the user attached with @
    TOOL = "tool"  # a tool the table does not know
    NONE = "none"  # results that hold nothing the conversation did not already have


@dataclass(frozen=True)
class Origin:
    kind: OriginKind
    private: bool  # the user's own data: notes, files, mail, memories
    untrusted: bool  # written by someone else: web pages, other people's messages, MCP
    name: str = ""  # "mcp:<server>" for MCP tools

    @property
    def is_source(self) -> bool:
        return self.private or self.untrusted


NEUTRAL = Origin(OriginKind.NONE, private=False, untrusted=False)
UNKNOWN_TOOL = Origin(OriginKind.TOOL, private=False, untrusted=True)

# (the call's arguments, the result's content) -> "note a.md", "web page https://…"
Labeller = Callable[[Mapping[str, Any], Any], str]
# the call's arguments -> where it sends data: "example.com", "Slack (#general)"
Destination = Callable[[Mapping[str, Any]], str]
# why a call waits for the user; a callable gets the sandbox's isolation level
ApprovalReason = str | Callable[[str], str]

DEFAULT_APPROVAL_REASON = (
    "calls a tool whose server asks for approval of every call, or that has side effects"
)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    source: str = "built-in"  # its group: "built-in", "web", "skills", "mcp:<server>"
    # Every call waits for the user's decision (permission rules, yolo and, for read-only
    # tools, the egress guard decide the rest at run time).
    requires_approval: bool = False
    origin: Origin = NEUTRAL  # where its results come from, for the egress guard
    label: Labeller | None = None  # names one of its results; None: "result of <name>"
    outbound: str | None = None  # what a call sends data to ("Slack")
    # The tool sends nothing off this machine but to the user's own accounts. A spec that
    # says neither this nor `outbound` counts as outbound: a new tool asks until its spec
    # says where its calls go.
    local: bool = False
    destination: Destination | None = None  # the same, from the call's arguments
    approval_reason: ApprovalReason = ""  # shown in the approval dialog
    key_arg: str = ""  # the argument that names a call in one line ("cmd", "query"); "": guess

    def result_label(self, args: Mapping[str, Any], content: Any) -> str:
        if self.label is not None:
            return self.label(args, content)
        return f"result of {self.name}"

    @property
    def is_outbound(self) -> bool:
        return self.outbound is not None or not self.local

    def destination_of(self, args: Mapping[str, Any]) -> str:
        """Where this call sends data ('' for a tool that sends nothing out)."""
        if not self.is_outbound:
            return ""
        if self.destination is not None:
            return self.destination(args)
        return self.outbound or f"wherever the tool {self.name} sends it (its spec does not say)"

    def reason(self, isolation_level: str) -> str:
        """Why a call waits for the user, for the approval dialog."""
        reason = self.approval_reason
        if callable(reason):
            return reason(isolation_level)
        return reason or DEFAULT_APPROVAL_REASON


def mcp_tool_spec(server: str, tool: str, *, local: bool, approval: bool) -> ToolSpec:
    """A (prefixed) tool of an MCP server: untrusted results; outbound unless `local`."""
    name = f"mcp:{server}"
    return ToolSpec(
        tool,
        source=name,
        requires_approval=approval,
        origin=Origin(OriginKind.MCP, private=False, untrusted=True, name=name),
        label=lambda _args, _content: f"{name} {tool}",
        outbound=None if local else f"the MCP server '{server}'",
        local=local,
    )


# -- label helpers ----------------------------------------------------------------------


def one_line(text: Any, limit: int = MAX_LABEL_CHARS) -> str:
    """`text` on one line, cut to `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def arg_text(args: Mapping[str, Any], name: str, default: str = "?") -> str:
    """An argument's value for a label; `default` when it is missing or empty."""
    value = args.get(name)
    return one_line(str(value)) if value not in (None, "") else default


def result_field(content: Any, name: str) -> Any:
    """A field of a dict result; None for anything else."""
    return content.get(name) if isinstance(content, dict) else None
