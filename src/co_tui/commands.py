"""Slash commands: an explicit registry (a dict, no decorators) and dispatch.

A handler gets a `CommandContext` and the text after the command name. It returns None
(display only, history unchanged) or a new history list for the session to rebind
(`/clear` returns []). Output goes through `ctx.show`, which takes a Rich renderable or a
Markdown string, so this module knows nothing of the UI that shows it. What a front does
not have (the span viewer, the session browser) is a `CommandContext` default that raises
`NotAvailableHere`: dispatch shows its message, saying where to find the feature instead.

To add a command: write `async def _my(ctx, arg) -> list | None` and add one
`SlashCommand` to `COMMANDS` (or call `register()` from a feature module).
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_tui.telemetry.tracing import traced_command

if TYPE_CHECKING:
    from co_tui.agent import AgentBundle
    from co_tui.config import Settings
    from co_tui.deps import CoDeps

History = list[Any]  # list[ModelMessage]; kept loose so this module imports nothing heavy


class NotAvailableHere(Exception):
    """A feature this front does not have; the message says where to find it instead."""


def _no_session_browser(session_id: str) -> None:
    raise NotAvailableHere(
        "Resume from the command line: `co-tui --continue` or `co-tui --resume [id]`."
    )


def _no_span_viewer(span_filter: str) -> None:
    raise NotAvailableHere(
        "The span viewer is part of the app (F2). Here: `co-tui traces` or `co-tui logs`."
    )


@dataclass
class CommandContext:
    message_history: History
    deps: CoDeps
    bundle: AgentBundle
    settings: Settings
    show: Callable[[object], None]  # a Rich renderable, or a str rendered as Markdown
    # Replace the agent (and the settings it was built from): used by /model.
    replace_bundle: Callable[[AgentBundle, Settings], None] | None = None
    session_tokens: int = 0
    last_answer: str = ""
    copy_to_clipboard: Callable[[str], None] | None = None
    # The front's session browser: a session id to open, or "" for the list (/resume).
    resume_session: Callable[[str], None] = _no_session_browser
    # The front's span viewer, with a filter (/spans).
    open_spans: Callable[[str], None] = _no_span_viewer

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
    usage: str = ""  # e.g. "/model [name]"


@dataclass(frozen=True)
class DispatchResult:
    known: bool
    history: History | None = None
    hint: str | None = None  # for an unknown command: "did you mean /help?"


# -- handlers -----------------------------------------------------------------------------


async def _help(ctx: CommandContext, arg: str) -> None:
    from rich.table import Table

    table = Table(title="Commands", title_justify="left", show_header=False, box=None)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for cmd in COMMANDS.values():
        table.add_row(cmd.usage or f"/{cmd.name}", cmd.description)
    table.add_row("!<command>", "run a shell command in the sandbox (no model involved)")
    keys = Table(title="Keys", title_justify="left", show_header=False, box=None)
    keys.add_column(style="bold cyan", no_wrap=True)
    keys.add_column()
    for key, what in KEY_HELP:
        keys.add_row(key, what)
    from rich.console import Group

    ctx.show(Group(table, "", keys))


KEY_HELP: list[tuple[str, str]] = [
    ("Enter", "send (while a turn runs: queue it, sent when the turn ends)"),
    ("Shift+Enter / Ctrl+J", "new line"),
    ("Up / Down", "previous / next prompt from history"),
    ("Up (empty prompt) / Esc", "take the last queued message back to edit it"),
    ("Tab", "complete a /command"),
    ("Esc / Ctrl+C", "cancel the running turn (what was queued comes back to the prompt)"),
    ("y / n / a a / Esc", "approval: approve, deny, approve all for the session, deny"),
    ("p", "approval: always allow this (an editable rule) in this project"),
    ("Ctrl+C twice", "exit (at an idle prompt)"),
    ("Ctrl+D / Ctrl+Q", "exit"),
    ("Ctrl+T", "show or hide thinking"),
    ("Ctrl+B", "show or hide the sidebar"),
    ("Ctrl+O", "copy the last answer (/copy n: a code block)"),
    ("Ctrl+P", "command palette"),
    ("F2", "span viewer (Esc returns)"),
]


async def _clear(ctx: CommandContext, arg: str) -> History:
    """A new session: approve-all (yolo) chosen in the old one does not carry over."""
    was_on = ctx.deps.auto_confirm and not ctx.settings.auto_confirm
    ctx.deps.auto_confirm = ctx.settings.auto_confirm
    ctx.show("Conversation cleared." + (" Approve-all (yolo) is off again." if was_on else ""))
    return []


async def _status(ctx: CommandContext, arg: str) -> None:
    from co_tui.sandbox import SandboxChoice
    from co_tui.status import gather_status, render_status_table

    deps = ctx.deps
    choice = SandboxChoice(
        deps.sandbox, deps.sandbox_reason, deps.sandbox_skipped, deps.sandbox_warning
    )
    rows = gather_status(ctx.settings, ctx.deps.workspace or Path.cwd(), choice)
    if ctx.settings.mcp_servers:
        from co_tui.mcp import mcp_status_rows

        rows += mcp_status_rows(ctx.settings, ctx.deps.mcp)
    ctx.show(render_status_table(rows))


async def _tools(ctx: CommandContext, arg: str) -> None:
    from rich.table import Table

    specs = ctx.bundle.tool_specs
    table = Table(title=f"Tools ({len(specs)})", title_justify="left", box=None)
    table.add_column("Source", style="bold", no_wrap=True)
    table.add_column("Tools (* asks for approval)")
    for source, names in ctx.bundle.tools_by_source().items():
        shown = (f"{n}*" if specs[n].requires_approval else n for n in names)
        table.add_row(source, ", ".join(shown))
    ctx.show(table)


async def _skills(ctx: CommandContext, arg: str) -> None:
    import asyncio

    from co_tui.skills import list_skills_display

    ctx.show(await asyncio.to_thread(list_skills_display, ctx.deps.workspace))


async def _history(ctx: CommandContext, arg: str) -> None:
    turns = 0
    for message in ctx.message_history:
        parts = getattr(message, "parts", [])
        if getattr(message, "kind", "") == "request" and any(
            getattr(p, "part_kind", "") == "user-prompt" for p in parts
        ):
            turns += 1
    ctx.show(
        f"{turns} turn(s), {len(ctx.message_history)} message(s) in this session; "
        f"{ctx.session_tokens:,} tokens used."
    )


async def _yolo(ctx: CommandContext, arg: str) -> None:
    value = arg.strip().lower()
    if value in ("on", "off"):
        ctx.deps.auto_confirm = value == "on"
    else:
        ctx.deps.auto_confirm = not ctx.deps.auto_confirm
    if ctx.deps.auto_confirm:
        ctx.show(
            "**yolo is on**: every tool call runs without asking, until this session ends "
            "(`/clear` and `/resume` start with it off)."
        )
    else:
        ctx.show("yolo is off: side effects ask for approval again.")


SWITCHABLE = {"ollama": "ollama_model", "openai": "openai_model"}


async def _model(ctx: CommandContext, arg: str) -> None:
    resolved = ctx.bundle.resolved
    label = resolved.label if resolved else (ctx.settings.model or "injected model")
    name = arg.strip()
    if not name:
        ctx.show(f"Model: `{label}`. Switch with `/model <name>` (ollama and openai providers).")
        return
    provider = resolved.provider if resolved else ""
    setting = SWITCHABLE.get(provider)
    if setting is None or ctx.replace_bundle is None:
        ctx.show(
            f"Switching is supported for ollama and openai-compatible providers, "
            f"not for `{provider or label}`. Change the settings and restart."
        )
        return
    from co_tui.agent import build_agent
    from co_tui.llm import ProviderError

    new_settings = ctx.settings.model_copy(update={setting: name, "model": ""})
    try:
        bundle = build_agent(new_settings)
    except ProviderError as exc:
        ctx.show(f"Cannot switch to `{name}`: {exc}")
        return
    from co_tui.mcp import attach_mcp

    if ctx.deps.mcp is not None:
        attach_mcp(bundle, ctx.deps.mcp)  # the session's MCP servers stay connected across /model
    ctx.replace_bundle(bundle, new_settings)
    new_label = bundle.resolved.label if bundle.resolved else name
    ctx.show(f"Model switched to `{new_label}`.")


def code_blocks(markdown: str) -> list[str]:
    """The fenced code blocks of a Markdown text, without their fences."""
    blocks: list[str] = []
    current: list[str] | None = None
    fence = ""
    for line in markdown.splitlines():
        stripped = line.strip()
        if current is None and stripped.startswith(("```", "~~~")):
            fence, current = stripped[:3], []
        elif current is not None and stripped.startswith(fence) and not stripped.strip(fence[0]):
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


async def _copy(ctx: CommandContext, arg: str) -> None:
    if ctx.copy_to_clipboard is None or not ctx.last_answer:
        ctx.show("Nothing to copy yet.")
        return
    if not arg.strip():
        ctx.copy_to_clipboard(ctx.last_answer)
        ctx.show("Copied the last answer.")
        return
    blocks = code_blocks(ctx.last_answer)
    try:
        n = int(arg.split()[-1])
    except ValueError:
        n = 0
    if not 1 <= n <= len(blocks):
        ctx.show(f"The last answer has {len(blocks)} code block(s): `/copy <1..{len(blocks)}>`.")
        return
    ctx.copy_to_clipboard(blocks[n - 1])
    ctx.show(f"Copied code block {n}.")


async def _compact(ctx: CommandContext, arg: str) -> None:
    """The model is sent a summary from now on; the conversation itself is kept."""
    from co_tui.context_window import compact_conversation

    if not ctx.message_history:
        ctx.show("Nothing to compact yet.")
        return
    model = ctx.bundle.summarizer or ctx.agent.model
    try:
        result = await compact_conversation(
            ctx.deps.context_window,
            ctx.message_history,
            model,
            focus=arg,
            retries=ctx.settings.model_http_retries,
        )
    except Exception as exc:  # the summariser failed: the model keeps being sent what it was
        ctx.show(f"Could not compact the conversation: {type(exc).__name__}: {exc}")
        return
    ctx.show(result.describe())


async def _resume(ctx: CommandContext, arg: str) -> None:
    ctx.resume_session(arg.strip())


async def _spans(ctx: CommandContext, arg: str) -> None:
    ctx.open_spans(arg)


async def _permissions(ctx: CommandContext, arg: str) -> None:
    from co_tui.permissions.listing import permissions_table, remove_saved_rule

    words = arg.split()
    if not words:
        ctx.show(permissions_table(ctx.deps.permissions))
    elif words[0] == "remove" and len(words) == 2:
        ctx.show(remove_saved_rule(ctx.deps.permissions, words[1]))
    else:
        ctx.show("`/permissions` lists the rules; `/permissions remove N` removes saved rule N.")


async def _forget(ctx: CommandContext, arg: str) -> None:
    from co_tui.tools.memory import forget_memory

    ctx.show(forget_memory(arg, ctx.deps.memory.path))


COMMANDS: dict[str, SlashCommand] = {
    "help": SlashCommand("help", "list commands and keys", _help),
    "clear": SlashCommand("clear", "forget the conversation and clear the screen", _clear),
    "status": SlashCommand("status", "provider, model, sandbox and integrations", _status),
    "tools": SlashCommand("tools", "the tools the assistant can call, by source", _tools),
    "skills": SlashCommand("skills", "the skills the assistant can load", _skills),
    "history": SlashCommand("history", "turns, messages and tokens in this session", _history),
    "yolo": SlashCommand(
        "yolo", "toggle approving every tool call without asking", _yolo, "/yolo [on|off]"
    ),
    "model": SlashCommand("model", "show or switch the model", _model, "/model [name]"),
    "copy": SlashCommand(
        "copy", "copy the last answer, or its n-th code block", _copy, "/copy [n]"
    ),
    "forget": SlashCommand("forget", "delete a saved memory by its id", _forget, "/forget <id>"),
    "spans": SlashCommand("spans", "the live span viewer (also F2)", _spans, "/spans [filter]"),
    "compact": SlashCommand(
        "compact", "summarise the conversation to free context", _compact, "/compact [focus]"
    ),
    "resume": SlashCommand("resume", "open an earlier session", _resume, "/resume [id]"),
    "permissions": SlashCommand(
        "permissions",
        "the permission rules in force; remove one saved for this project",
        _permissions,
        "/permissions [remove N]",
    ),
}


def register(command: SlashCommand) -> None:
    """For feature modules that bring their own command (e.g. /compact)."""
    COMMANDS[command.name] = command


def parse(text: str) -> tuple[str, str]:
    """'/model  qwen3:8b' -> ('model', 'qwen3:8b')."""
    body = text.strip().removeprefix("/")
    name, _, arg = body.partition(" ")
    return name.lower(), arg.strip()


def completions(prefix: str) -> list[str]:
    """Command names (with the slash) starting with `prefix` ('/he' -> ['/help'])."""
    name = prefix.strip().removeprefix("/").lower()
    return [f"/{n}" for n in sorted(COMMANDS) if n.startswith(name)]


def suggest(name: str) -> str | None:
    close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.5)
    if close:
        return close[0]
    starts = [n for n in COMMANDS if n.startswith(name[:2])] if name else []
    return starts[0] if starts else None


@traced_command
async def dispatch(ctx: CommandContext, text: str) -> DispatchResult:
    name, arg = parse(text)
    command = COMMANDS.get(name)
    if command is None:
        close = suggest(name)
        hint = f"Unknown command /{name}." + (f" Did you mean /{close}?" if close else "")
        return DispatchResult(False, None, hint + " Type /help for the list.")
    try:
        history = await command.handler(ctx, arg)
    except NotAvailableHere as exc:
        ctx.show(str(exc))
        return DispatchResult(True)
    return DispatchResult(True, history)
