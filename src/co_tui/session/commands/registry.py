"""The slash-command registry: what a command is (`SlashCommand`), what its handler gets
(`CommandContext`), the commands by name (`COMMANDS`), and finding one: `parse`,
`is_command`, `completions`, `hint_for`, `suggest`.

What the front offers commands (the span viewer, the session browser, the clipboard) is
`ctx.host` (host.py); a front without them raises `NotAvailableHere`, whose message
dispatch shows, saying where to find the feature instead. `is_command(text)` decides
whether a line starting with "/" is a command at all: a path (`/etc/hosts`) or an unknown
word followed by more text is a prompt for the model. Custom commands (custom.py: Markdown
files whose text is a prompt) are looked up after the built-ins and never shadow one.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from co_tui.session.commands.host import CommandHost, NoScreens

if TYPE_CHECKING:
    from co_tui.agent.build import AgentBundle
    from co_tui.config.settings import Settings
    from co_tui.context.deps import CoDeps
    from co_tui.context.usage import UsageTotals
    from co_tui.session.commands.custom import CustomCommand


History = list[Any]  # list[ModelMessage]; kept loose so this module imports nothing heavy


class UsageError(Exception):
    """The arguments do not fit the command: nothing was done; dispatch adds the usage."""


@dataclass
class CommandContext:
    message_history: History
    deps: CoDeps
    bundle: AgentBundle
    settings: Settings
    show: Callable[[object], None]  # a Rich renderable, or a str rendered as Markdown
    # What the front offers commands (screens, the clipboard, leaving); by default nothing.
    host: CommandHost = field(default_factory=NoScreens)
    session_tokens: int = 0
    # The session's totals: the context meter's count, which /compact reports and lowers.
    usage: UsageTotals | None = None
    last_answer: str = ""
    session_id: str = ""
    custom: Mapping[str, CustomCommand] = field(default_factory=dict)

    @property
    def agent(self) -> Any:
        return self.bundle.agent

    @property
    def tool_names(self) -> list[str]:
        return self.bundle.tool_names


Handler = Callable[[CommandContext, str], Awaitable[History | None]]


@dataclass(frozen=True)
class SlashCommand:
    name: str
    description: str
    handler: Handler
    usage: str = ""  # e.g. "/model [name]"; without arguments in it, none are accepted

    @property
    def usage_line(self) -> str:
        return self.usage or f"/{self.name}"

    @property
    def takes_argument(self) -> bool:
        return " " in self.usage_line


@dataclass(frozen=True)
class DispatchResult:
    known: bool
    history: History | None = None
    hint: str | None = None  # for an unknown command: "did you mean /help?"


COMMANDS: dict[str, SlashCommand] = {}


def register(command: SlashCommand) -> None:
    """For feature modules that bring their own command (e.g. /compact)."""
    COMMANDS[command.name] = command


def parse(text: str) -> tuple[str, str]:
    """'/model  qwen3:8b' -> ('model', 'qwen3:8b')."""
    body = text.strip().removeprefix("/")
    name, _, arg = body.partition(" ")
    if "\n" in name or "\t" in name:
        name, _, rest = name.replace("\t", " ").replace("\n", " ").partition(" ")
        arg = f"{rest} {arg}".strip()
    return name.lower(), arg.strip()


def _all(custom: Mapping[str, CustomCommand]) -> dict[str, SlashCommand | CustomCommand]:
    return {**custom, **COMMANDS}  # a built-in always wins


def is_command(text: str, custom: Mapping[str, CustomCommand] | None = None) -> bool:
    """Whether a line is a slash command rather than a prompt: '/etc/hosts — what is it?'
    (a path: another '/' or a '.') and '/word more text' with an unknown word go to the
    model; a lone unknown '/word' is a command (a typo, answered with a suggestion)."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return False
    first = stripped[1:].split(maxsplit=1)
    word = first[0] if first else ""
    if "/" in word or "." in word:
        return False
    if word.lower() in _all(custom or {}):
        return True
    return len(first) < 2


def completions(prefix: str, custom: Mapping[str, CustomCommand] | None = None) -> list[str]:
    """Command names (with the slash) starting with `prefix` ('/he' -> ['/help'])."""
    name = prefix.strip().removeprefix("/").lower()
    return [f"/{n}" for n in sorted(_all(custom or {})) if n.startswith(name)]


def hint_for(text: str, custom: Mapping[str, CustomCommand] | None = None) -> str | None:
    """The line under the prompt while a command is typed: matching commands while its
    name is incomplete, then its usage and what it does; None for anything else."""
    if not text.startswith("/") or "\n" in text or not is_command(text, custom):
        return None
    known = _all(custom or {})
    name, _ = parse(text)
    command = known.get(name)
    if command is not None and (" " in text or len(completions(text, custom)) == 1):
        return f"{command.usage_line}  {command.description}"
    if " " in text:
        return None
    matches = completions(text, custom)
    if len(matches) == 1:
        only = known[matches[0][1:]]
        return f"{only.usage_line}  {only.description}"
    parts = [f"{m}  {known[m[1:]].description}" for m in matches[:6]]
    return "   ".join(parts) if parts else None


def suggest(name: str, custom: Mapping[str, CustomCommand] | None = None) -> str | None:
    names = list(_all(custom or {}))
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    if close:
        return close[0]
    starts = [n for n in names if n.startswith(name[:2])] if name else []
    return starts[0] if starts else None
