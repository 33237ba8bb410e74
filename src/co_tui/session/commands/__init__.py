"""Slash commands.

- registry.py: what a command is, what its handler gets (`CommandContext`), the commands by
  name, and finding one as the user types;
- host.py: what a front offers commands (`CommandHost`: its screens, the clipboard,
  leaving), and `NoScreens`, a front that offers none of it;
- builtins.py: the built-in commands, in one explicit dict the registry takes in;
- code_blocks.py: which code blocks of an answer `/copy n` counts (the transcript numbers
  them from there too);
- custom.py: the user's and a trusted project's Markdown commands (a prompt each);
- dispatch.py: running one, in its own span.

Importing this package loads the built-ins: `commands.dispatch(ctx, "/help")` just works.
"""

from co_tui.session.commands import builtins as _builtins  # noqa: F401  (registers them)
from co_tui.session.commands.dispatch import dispatch
from co_tui.session.commands.host import CommandHost, NoScreens, NotAvailableHere
from co_tui.session.commands.registry import (
    COMMANDS,
    CommandContext,
    DispatchResult,
    SlashCommand,
    UsageError,
    completions,
    hint_for,
    is_command,
    parse,
    register,
    suggest,
)

__all__ = [
    "COMMANDS",
    "CommandContext",
    "CommandHost",
    "DispatchResult",
    "NoScreens",
    "NotAvailableHere",
    "SlashCommand",
    "UsageError",
    "completions",
    "dispatch",
    "hint_for",
    "is_command",
    "parse",
    "register",
    "suggest",
]
