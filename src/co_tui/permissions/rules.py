"""The permission rule grammar. A rule names a tool, and for two tools what its argument is:

    shell                       every shell command (`shell` is run_shell_command)
    shell(git status)           exactly this command (string equality, outer spaces and tabs
                                and a final line break ignored)
    shell(npm test *)           a command whose shell words start with `npm test`; ` *` means
                                any further words. Never a command with a shell operator,
                                `$`, a backtick or a line break.
    shell(*)                    every command without those
    web_fetch(domain:python.org)  a URL whose host is python.org or a subdomain of it
    web_search, draft_email     every call of that tool
    mcp:github_*                MCP tools (named `<server>_<tool>`) matching the glob

`parse_rule` raises RuleError, whose message says what is wrong and how to write it.

Blanks are what /bin/sh splits words on: space and tab, nothing else. Any other character
Python calls whitespace (\\xa0, \\u3000, \\v, \\f, \\x1c-\\x1f, \\x85, \\u2028, \\r) is part of a
word for sh, so it is for the rules, in the rule text and in the command alike.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Literal

SHELL_TOOL = "run_shell_command"
FETCH_TOOL = "web_fetch"
TOOL_ALIASES = {"shell": SHELL_TOOL}

# What a prefix rule never covers: with any of these the command is more than one plain
# command line (or expands into something its words do not show).
SHELL_SYNTAX = frozenset(";&|<>()$`\n\r\x00")
# Characters the shell may expand: a prefix word with one of them could match a command word
# that is quoted in one place and expanded in another.
_EXPANDING = frozenset("*?[]{}~#")

SH_BLANKS = " \t"

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]+")
_MCP_GLOB = re.compile(r"[A-Za-z0-9_\-*?\[\]!]+")
_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_HOST = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")

RuleKind = Literal["tool", "command", "prefix", "domain", "mcp"]


class RuleError(ValueError):
    """Not a permission rule; the message says why, in one line."""


def sh_strip(text: str) -> str:
    """`text` without the outer blanks sh ignores (and a final line break, which only ends
    the command)."""
    return text.strip(SH_BLANKS).removesuffix("\n").strip(SH_BLANKS)


def sh_words(text: str) -> list[str]:
    """The words of a line without shell syntax, split on blanks only, quotes removed as
    POSIX sh does (shlex's default would also split on \\r and \\n). Raises ValueError on
    an unclosed quote."""
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace = SH_BLANKS
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


@dataclass(frozen=True)
class Rule:
    text: str  # as written, outer whitespace removed
    kind: RuleKind
    tool: str = ""  # the tool it names (`shell` spelled run_shell_command); "" for `mcp:`
    command: str = ""  # "command": the exact command
    words: tuple[str, ...] = ()  # "prefix": the first shell words
    domain: str = ""  # "domain": the host, lower case, in ASCII
    pattern: str = ""  # "mcp": the glob over MCP tool names

    def describe(self) -> str:
        """What the rule covers, in words."""
        if self.kind == "command":
            return f"exactly the command `{self.command}`"
        if self.kind == "prefix":
            if not self.words:
                return "every shell command without shell operators"
            return f"`{shlex.join(self.words)}` with any further words, no shell operators"
        if self.kind == "domain":
            return f"fetching from {self.domain} and its subdomains"
        if self.kind == "mcp":
            return f"MCP tools matching `{self.pattern}`"
        if self.tool == SHELL_TOOL:
            return "every shell command"
        return f"every {self.tool} call"


def parse_rule(text: str) -> Rule:
    rule = sh_strip(text)
    if not rule:
        raise RuleError("a rule cannot be empty")
    if rule.startswith("mcp:"):
        pattern = rule.removeprefix("mcp:")
        if not _MCP_GLOB.fullmatch(pattern):
            raise RuleError(
                "`mcp:` takes a glob over MCP tool names (letters, digits, _ - * ? [ ]), "
                "e.g. mcp:github_*"
            )
        return Rule(rule, "mcp", pattern=pattern)
    name, paren, rest = rule.partition("(")
    name = name.strip(SH_BLANKS)
    if not _TOOL_NAME.fullmatch(name):
        raise RuleError(
            f"`{name}` is not a tool name: write `tool`, `tool(argument)` or `mcp:glob`"
        )
    tool = TOOL_ALIASES.get(name, name)
    if not paren:
        return Rule(rule, "tool", tool)
    if not rest.endswith(")"):
        raise RuleError("the argument has no closing `)` at the end of the rule")
    argument = sh_strip(rest[:-1])
    if not argument:
        raise RuleError(f"`{name}()` has an empty argument: write `{name}` for every call")
    if tool == SHELL_TOOL:
        return _shell_rule(rule, argument)
    if tool == FETCH_TOOL:
        return _domain_rule(rule, argument)
    raise RuleError(
        f"only shell(…) and web_fetch(domain:…) take an argument; write `{name}` for every call"
    )


def _shell_rule(rule: str, argument: str) -> Rule:
    if argument == "*":
        return Rule(rule, "prefix", SHELL_TOOL)
    if not argument.endswith("*"):
        return Rule(rule, "command", SHELL_TOOL, command=argument)
    body = argument[:-1]
    if body.rstrip(SH_BLANKS) == body:
        raise RuleError(
            "`*` must be a word of its own at the end (`npm test *`): rules match shell "
            "words, not characters"
        )
    if syntax := sorted(set(body) & SHELL_SYNTAX):
        shown = " ".join(repr(ch)[1:-1] for ch in syntax)
        raise RuleError(
            f"a prefix rule cannot contain {shown}: shell operators, `$`, backticks and line "
            "breaks are never covered by a prefix; write the exact command instead"
        )
    try:
        words = tuple(sh_words(body))
    except ValueError as exc:
        raise RuleError(f"the command cannot be split into shell words ({exc})") from None
    for word in words:
        if set(word) & _EXPANDING:
            raise RuleError(
                f"the prefix word `{word}` contains one of * ? [ ] {{ }} ~ #, which the shell "
                "may expand; only the last word may be `*`"
            )
    return Rule(rule, "prefix", SHELL_TOOL, words=words)


def _domain_rule(rule: str, argument: str) -> Rule:
    kind, colon, value = argument.partition(":")
    if kind.strip(SH_BLANKS) != "domain" or not colon:
        raise RuleError("web_fetch takes `domain:<host>`, e.g. web_fetch(domain:docs.python.org)")
    host = value.strip(SH_BLANKS).lower().removesuffix(".")
    if host.startswith(("*.", ".")):
        raise RuleError(f"`domain:{host.lstrip('*.')}` covers its subdomains already")
    if not _HOST.fullmatch(host):
        raise RuleError(
            f"`{value.strip(SH_BLANKS)}` is not a host name (letters, digits, - and dots; a name "
            "with other letters in its xn-- form)"
        )
    return Rule(rule, "domain", FETCH_TOOL, domain=host)
