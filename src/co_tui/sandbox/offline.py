"""Did a command fail for lack of network? Said only when the sandbox gave it none.

Two signs, checked only for a command that failed (non-zero exit, timed out) and ran with
no network:
- its output holds a network error that a missing network produces at once: a name that
  cannot be resolved (curl and git "Could not resolve host", glibc "Temporary failure in
  name resolution" as Python, pip, wget and ssh print it, Node's EAI_AGAIN) or "Network is
  unreachable". The phrase found is quoted as the evidence;
- it timed out, printing none of those, and one of its words is a program that fetches from
  the network (`curl`, `pip`, `git fetch`, …): it may have been waiting for it. Said as
  "may", since it may also just have been slow.

What the note says to do is the caller's (the tool tells the model, `!cmd` the user).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from co_tui.sandbox.base import CommandResult

# Looked for in the output's last part: where a failing command says why.
TAIL_CHARS = 8000
_FAILURES = re.compile(
    r"Could not resolve host(?:name)?"
    r"|Temporary failure in name resolution"
    r"|unable to resolve host address"
    r"|getaddrinfo EAI_AGAIN"
    r"|Network is unreachable",
    re.IGNORECASE,
)
# Programs that fetch from the network, and git's subcommands that do.
NETWORK_PROGRAMS = frozenset(
    {
        "curl",
        "wget",
        "pip",
        "pip3",
        "pipx",
        "uv",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "cargo",
        "go",
        "gem",
        "bundle",
        "composer",
        "apt",
        "apt-get",
        "apk",
        "dnf",
        "yum",
        "brew",
        "ssh",
        "scp",
        "rsync",
        "docker",
        "podman",
        "nc",
        "ping",
        "dig",
        "nslookup",
        "host",
        "ftp",
        "sftp",
        "telnet",
        "http",
        "https",
        "aria2c",
        "conda",
        "mamba",
        "poetry",
    }
)
GIT_NETWORK = frozenset({"fetch", "clone", "pull", "push", "ls-remote", "submodule"})


@dataclass(frozen=True)
class OfflineFailure:
    """Why the failure looks like a missing network: the phrase found in the output, or
    (`evidence` "") the network program the timed-out command ran."""

    evidence: str
    program: str = ""

    def what(self) -> str:
        if self.evidence:
            return f"its output says `{self.evidence}`"
        return f"it timed out running `{self.program}`, which may have been waiting for it"


def _simple_commands(cmd: str) -> list[list[str]]:
    """`cmd`'s simple commands as words (split at ; & | and parentheses); [] when it does
    not parse (an unclosed quote)."""
    lexer = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token and set(token) <= set(";&|()"):
            commands.append([])
        else:
            commands[-1].append(token)
    return [words for words in commands if words]


def network_program(cmd: str) -> str:
    """The first program `cmd` runs that fetches from the network ("git fetch" for git's
    subcommands), or ""."""
    for words in _simple_commands(cmd):
        words = [w for w in words if "=" not in w.split("/", 1)[0]]  # NAME=value first
        name = words[0].rsplit("/", 1)[-1] if words else ""
        if name in NETWORK_PROGRAMS:
            return name
        if name == "git":
            sub = next((w for w in words[1:] if w in GIT_NETWORK), "")
            if sub:
                return f"git {sub}"
    return ""


def offline_failure(cmd: str, result: CommandResult) -> OfflineFailure | None:
    """The sign that `cmd`, run with no network, failed for lack of it; None when there is
    none (or it did not fail)."""
    if result.exit_code == 0 and not result.timed_out:
        return None
    found = _FAILURES.search(result.output[-TAIL_CHARS:])
    if found is not None:
        return OfflineFailure(found.group(0))
    if result.timed_out and (program := network_program(cmd)):
        return OfflineFailure("", program)
    return None
