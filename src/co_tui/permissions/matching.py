"""Whether one rule covers one tool call.

Prefix rules compare shell words (as POSIX sh splits a line without `$`, backticks and line
breaks: on spaces and tabs only), never raw string prefixes, and never cover a command with
shell syntax: `npm test *` covers `npm test --watch`, not `npm test; rm -rf ~` nor
`npm testx`. An exact rule ignores only the blanks sh ignores around a command: `git status`
does not cover `git status\\xa0` (sh passes `status\\xa0` to git). A web_fetch URL's host is
read as the fetcher reads it (httpx), and a URL with a user name is no match.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import httpx

from co_tui.permissions.rules import (
    FETCH_TOOL,
    SHELL_SYNTAX,
    SHELL_TOOL,
    Rule,
    sh_strip,
    sh_words,
)


@dataclass(frozen=True)
class ToolCall:
    """What a rule looks at: the tool, its arguments, and whether an MCP server has it."""

    tool_name: str
    args: Mapping[str, Any]
    mcp: bool = False

    @property
    def command(self) -> str | None:
        cmd = self.args.get("cmd") if self.tool_name == SHELL_TOOL else None
        return cmd if isinstance(cmd, str) else None

    @property
    def url(self) -> str | None:
        url = self.args.get("url") if self.tool_name == FETCH_TOOL else None
        return url if isinstance(url, str) else None


def plain_words(cmd: str) -> list[str] | None:
    """The shell words of a plain command line; None when it has shell syntax or a quote
    that does not close."""
    if set(cmd) & SHELL_SYNTAX:
        return None
    try:
        return sh_words(cmd)
    except ValueError:
        return None


def fetch_host(url: str) -> str | None:
    """The host web_fetch would connect to, lower case, in ASCII; None when it would refuse."""
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    if parsed.scheme not in ("http", "https") or parsed.userinfo or not parsed.raw_host:
        return None
    return parsed.raw_host.decode("ascii", "replace").lower().removesuffix(".")


def covers(rule: Rule, call: ToolCall) -> bool:
    if rule.kind == "tool":
        return call.tool_name == rule.tool
    if rule.kind == "mcp":
        return call.mcp and fnmatchcase(call.tool_name, rule.pattern)
    if rule.kind == "domain":
        host = fetch_host(call.url) if call.url is not None else None
        return host is not None and (host == rule.domain or host.endswith("." + rule.domain))
    cmd = call.command
    if cmd is None:
        return False
    if rule.kind == "command":
        return sh_strip(cmd) == rule.command
    words = plain_words(cmd)
    return words is not None and tuple(words[: len(rule.words)]) == rule.words
