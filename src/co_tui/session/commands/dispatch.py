"""Running a slash command: look it up, check its arguments, call its handler, in a span."""

from __future__ import annotations

from rich.text import Text

from co_tui.session.commands.host import NotAvailableHere
from co_tui.session.commands.registry import (
    COMMANDS,
    CommandContext,
    DispatchResult,
    SlashCommand,
    UsageError,
    parse,
    suggest,
)
from co_tui.telemetry.tracing import command_span


def _usage_text(problem: str, command: SlashCommand) -> Text:
    return Text.assemble(
        problem, "\nusage: ", (command.usage_line, "bold cyan"), (f"\n{command.description}", "dim")
    )


async def dispatch(ctx: CommandContext, text: str) -> DispatchResult:
    """Run the slash command `text` names, in its own span."""
    with command_span(text) as span:
        result = await _dispatch(ctx, text)
        span.finished(known=result.known)
        return result


async def _dispatch(ctx: CommandContext, text: str) -> DispatchResult:
    name, arg = parse(text)
    command = COMMANDS.get(name)
    if command is None:
        close = suggest(name, ctx.custom)
        hint = f"Unknown command /{name}." + (f" Did you mean /{close}?" if close else "")
        return DispatchResult(False, None, hint + " Type /help for the list.")
    try:
        if arg and not command.takes_argument:
            raise UsageError(f"/{name} takes no argument (got {arg!r}); nothing was done.")
        history = await command.handler(ctx, arg)
    except UsageError as exc:
        ctx.show(_usage_text(str(exc), command))
        return DispatchResult(True)
    except NotAvailableHere as exc:
        ctx.show(str(exc))
        return DispatchResult(True)
    return DispatchResult(True, history)
