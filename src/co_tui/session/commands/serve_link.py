"""/serve link: in an app served by `co-tui serve`, a new one-time link that opens this
conversation in another browser or on another device, without restarting the server."""

from __future__ import annotations

from rich.text import Text

from co_tui.session.commands.host import NotAvailableHere
from co_tui.session.commands.registry import (
    CommandContext,
    SlashCommand,
    UsageError,
)


async def _serve(ctx: CommandContext, arg: str) -> None:
    from co_tui.protocol.serve_links import LinkUnavailable, request_link, served_links_socket

    if arg.strip().lower() not in ("", "link"):
        raise UsageError(f"{arg!r} is not something /serve does; no link was made.")
    if served_links_socket() is None:
        raise NotAvailableHere(
            "/serve link works in co-tui served to a browser: start it with `co-tui serve`, "
            "open the address it prints, then ask there for a link for another device."
        )
    # A conversation with turns is stored: the link opens it. An empty one is not yet.
    resume = ctx.session_id if ctx.message_history and ctx.session_id else None
    try:
        link = await request_link(resume)
    except LinkUnavailable as exc:
        ctx.show(Text(f"No link: {exc}"))
        return
    opens = "this conversation" if resume else "co-tui (a new conversation)"
    minutes = max(1, link.valid_for_s // 60)
    said = Text.assemble(
        f"A link that opens {opens} in another browser or on another device:\n",
        (link.url, "bold"),
        f"\nPaste it into that browser's address bar (a page's link to it is refused). It "
        f"works once, within {minutes} minutes; whoever opens it can use co-tui as you.",
    )
    try:
        ctx.host.copy_to_clipboard(link.url)
        said.append(" Copied to the clipboard.")
    except NotAvailableHere:
        pass  # the link is shown all the same
    if link.loopback_only:
        said.append(
            "\nThis server answers on this machine only: for another device, restart it with "
            "`co-tui serve --host 0.0.0.0` (or behind a TLS proxy, with --public-url)."
        )
    ctx.show(said)


SERVE_COMMAND = SlashCommand(
    "serve",
    "a one-time link to this conversation for another browser (in co-tui serve)",
    _serve,
    "/serve link",
)
