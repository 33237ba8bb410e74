"""The built-in slash commands: one handler each, listed in BUILTIN_COMMANDS (an explicit
dict, no decorators), which the registry takes in when this module loads.

A handler gets a `CommandContext` and the text after the command name. It returns None
(display only, history unchanged) or a new history list for the session to rebind (`/new`
and `/clear` return []). Output goes through `ctx.show`, which takes a Rich renderable or a
Markdown string, so this module knows nothing of the UI that shows it.

To add a command: write `async def _my(ctx, arg) -> list | None` and add one
`SlashCommand` to `BUILTIN_COMMANDS` (or call `registry.register()` from a feature
module). Its `usage` says which arguments it takes: a command whose usage names none
refuses one, and a handler raises `UsageError` for arguments it cannot use; either way
nothing changes and the usage is shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from co_tui.config.settings import Settings
from co_tui.session.commands.host import NotAvailableHere
from co_tui.session.commands.jobs_commands import INBOX_COMMAND, JOBS_COMMAND
from co_tui.session.commands.registry import (
    COMMANDS,
    CommandContext,
    History,
    SlashCommand,
    UsageError,
)
from co_tui.session.commands.serve_link import SERVE_COMMAND


async def _help(ctx: CommandContext, arg: str) -> None:
    from rich.console import Group, RenderableType
    from rich.table import Table

    def listing(title: str) -> Table:
        table = Table(title=title, title_justify="left", show_header=False, box=None)
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        return table

    # Text cells: "[on|off]" and "<id>" are arguments, not Rich markup.
    table = listing("Commands")
    for cmd in COMMANDS.values():
        table.add_row(Text(cmd.usage_line), Text(cmd.description))
    table.add_row(
        Text("!<command>"), Text("run a shell command in the sandbox (no model involved)")
    )
    parts: list[RenderableType] = [table]
    from co_tui.session.commands.skill_commands import SkillCommand

    own = [c for c in ctx.custom.values() if not isinstance(c, SkillCommand)]
    skills = [c for c in ctx.custom.values() if isinstance(c, SkillCommand)]
    for title, listed in (
        ("Your commands (a prompt from a Markdown file)", own),
        ("Skills (/skills lists them all)", skills),
    ):
        if listed:
            custom = listing(title)
            for command in listed:
                custom.add_row(Text(command.usage_line), Text(command.description))
            parts += ["", custom]
    keys = listing("Keys")
    for key, what in KEY_HELP:
        keys.add_row(Text(key), Text(what))
    ctx.show(Group(*parts, "", keys))


KEY_HELP: list[tuple[str, str]] = [
    ("Enter", "send (while a turn runs: queue it, sent when the turn ends)"),
    ("Shift+Enter / Ctrl+J", "new line"),
    ("Up / Down", "previous / next prompt from history"),
    ("Up (empty prompt) / Esc", "take the last queued message back to edit it"),
    ("Tab", "complete a /command"),
    ("Esc / Ctrl+C", "cancel the running turn (what was queued comes back to the prompt)"),
    ("y / n / a a / Esc", "approval: approve, deny, approve all for the session, deny"),
    ("p", "approval: always allow this (an editable rule) in this project"),
    ("Ctrl+C", "with a draft: clear it (Up brings it back); twice on an empty prompt: exit"),
    ("Ctrl+D / Ctrl+Q", "exit (Ctrl+D deletes forward while the prompt has text)"),
    ("Ctrl+G", "edit the prompt in $VISUAL / $EDITOR"),
    ("Ctrl+Z", "suspend to the shell (fg brings it back); undo in the prompt: Ctrl+_"),
    ("@", "attach a workspace file or a vault note (a fuzzy picker)"),
    ("Ctrl+T", "show or hide thinking"),
    ("Ctrl+B", "show or hide the sidebar"),
    ("Ctrl+O", "copy the last answer (/copy n: a code block)"),
    ("Ctrl+P", "command palette"),
    ("F2", "span viewer (Esc returns)"),
    ("Ctrl+F", "find in the conversation: Enter / F3 older, Shift+Enter / Shift+F3 newer"),
    ("PageUp / PageDown", "scroll the conversation a page"),
    ("Shift+Up / Shift+Down", "scroll the conversation a line (in a one-line prompt)"),
    ("Ctrl+Home / Ctrl+End", "the top of the conversation / back to the end (follows output)"),
]


async def _new(ctx: CommandContext, arg: str) -> History:
    """A new session with a new id; the old one stays stored. Approve-all chosen in the old
    one does not carry over (ChatSession.replace_history resets it)."""
    was_on = ctx.deps.auto_confirm and not ctx.settings.auto_confirm
    said = "New session started."
    if ctx.message_history and ctx.session_id:
        said += f" The previous one stays available: `/resume {ctx.session_id[:8]}`."
    ctx.show(said + (" Approve-all (yolo) is off again." if was_on else ""))
    return []


async def _status(ctx: CommandContext, arg: str) -> None:
    from co_tui.sandbox import SandboxChoice
    from co_tui.session.health import gather_status, render_status_table

    deps = ctx.deps
    choice = SandboxChoice(
        deps.sandbox, deps.sandbox_reason, deps.sandbox_skipped, deps.sandbox_warning
    )
    rows = gather_status(ctx.settings, ctx.deps.workspace or Path.cwd(), choice)
    if ctx.settings.mcp_servers:
        from co_tui.session.health import mcp_status_rows

        rows += mcp_status_rows(ctx.settings, ctx.deps.mcp)
    ctx.show(render_status_table(rows))


async def _tools(ctx: CommandContext, arg: str) -> None:
    import asyncio

    from co_tui.session.tool_listing import tools_table

    ctx.show(await asyncio.to_thread(tools_table, ctx.bundle, ctx.settings))


async def _skills(ctx: CommandContext, arg: str) -> None:
    import asyncio

    from co_tui.session.commands.skill_commands import SkillCommand
    from co_tui.skills import list_skills_display

    def command_note(name: str) -> str:
        if name in COMMANDS:
            return f"/{name} is a built-in command: ask for the skill by name instead"
        command = ctx.custom.get(name)
        if command is None:  # a front without custom commands (co-tui -p)
            return ""
        if not isinstance(command, SkillCommand):
            return f"/{name} is your custom command: ask for the skill by name instead"
        return f"run it: `{command.usage_line}`"

    ctx.show(await asyncio.to_thread(list_skills_display, ctx.deps.project, command_note))


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
        ctx.deps.set_approve_all(value == "on")
    elif not value:
        ctx.deps.set_approve_all(not ctx.deps.auto_confirm)
    else:
        raise UsageError(f"{arg!r} is neither on nor off; approve-all is unchanged.")
    if ctx.deps.auto_confirm:
        ctx.show(
            "**yolo is on**: every tool call runs without asking, until this session ends "
            "(`/new` and `/resume` start with it off). Not covered: a call the egress guard "
            "holds (it may follow untrusted content, or carries your private text) still asks."
        )
    else:
        ctx.show("yolo is off: side effects ask for approval again.")


async def _model(ctx: CommandContext, arg: str) -> None:
    from co_tui.llm.model_list import (
        MODEL_SETTINGS,
        ModelListUnavailable,
        list_models,
        models_table,
        switched_settings,
    )

    resolved = ctx.bundle.resolved
    label = resolved.label if resolved else (ctx.settings.model or "injected model")
    current = resolved.model_name if resolved else ""
    provider = resolved.provider if resolved else ""
    name = arg.strip()
    if not name:
        try:
            ctx.host.choose_model()
            return
        except NotAvailableHere:
            pass  # no picker here: the models are listed
    chosen = switched_settings(ctx.settings, name)
    if chosen is not None:
        # "provider:model", as the picker answers: no need to ask the provider first.
        await _switch(ctx, chosen, name)
        return
    try:
        served = await list_models(ctx.settings, provider)
    except ModelListUnavailable as exc:
        served, why_not = None, str(exc)
    if not name:
        if served is not None:
            ctx.show(models_table(provider, served, current))
        else:
            ctx.show(Text(f"Model: {label}. {why_not}"))
        return
    if provider not in MODEL_SETTINGS or provider == "local":
        ctx.show(
            f"Switching by name is supported for the gemini, ollama and openai-compatible "
            f"providers, not for `{provider or label}`; name another provider as "
            "`/model provider:model`."
        )
        return
    if served is None:
        ctx.show(Text(f"Cannot switch to {name}: {why_not}"))
        return
    if name not in served:
        ctx.show(Text(f"{provider} does not serve a model named {name!r}.", style="bold"))
        ctx.show(models_table(provider, served, current))
        return
    same_provider = ctx.settings.model_copy(update={MODEL_SETTINGS[provider]: name, "model": ""})
    await _switch(ctx, same_provider, name)


async def _switch(ctx: CommandContext, new_settings: Settings, name: str) -> None:
    """The session goes on with the model `new_settings` name; the conversation stays."""
    from co_tui.agent.build import build_agent
    from co_tui.llm import ProviderError

    try:
        bundle = build_agent(new_settings)
    except ProviderError as exc:
        ctx.show(Text(f"Cannot switch to {name}: {exc}"))
        return
    from co_tui.agent.mcp import attach_mcp

    if ctx.deps.mcp is not None:
        attach_mcp(bundle, ctx.deps.mcp)  # the session's MCP servers stay connected across /model
    ctx.host.replace_bundle(bundle, new_settings)
    new_label = bundle.resolved.label if bundle.resolved else name
    ctx.show(f"Model switched to `{new_label}`.")


async def _copy(ctx: CommandContext, arg: str) -> None:
    which = arg.strip()
    if which and not which.isdigit():
        raise UsageError(f"{which!r} is not a code block number; nothing was copied.")
    if not ctx.last_answer:
        ctx.show("Nothing to copy yet: there is no answer in this session.")
        return
    if not which:
        ctx.host.copy_to_clipboard(ctx.last_answer)
        ctx.show("Copied the last answer.")
        return
    from co_tui.session.commands.code_blocks import code_blocks

    blocks = code_blocks(ctx.last_answer)
    n = int(which)
    if not blocks:
        ctx.show("The last answer has no code blocks; `/copy` copies the whole answer.")
        return
    if not 1 <= n <= len(blocks):
        count = "one code block" if len(blocks) == 1 else f"{len(blocks)} code blocks"
        pick = "`/copy 1`" if len(blocks) == 1 else f"`/copy 1` to `/copy {len(blocks)}`"
        ctx.show(f"The last answer has {count}: {pick}.")
        return
    ctx.host.copy_to_clipboard(blocks[n - 1])
    ctx.show(f"Copied code block {n}.")


async def _compact(ctx: CommandContext, arg: str) -> None:
    """The model is sent a summary from now on; the conversation itself is kept."""
    from co_tui.context.window import compact_conversation

    if not ctx.message_history:
        ctx.show("Nothing to compact yet.")
        return
    model = ctx.bundle.summarizer or ctx.agent.model
    before = ctx.usage.context_tokens if ctx.usage is not None else 0
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
    if result.recorded and ctx.usage is not None:
        ctx.usage.compacted(result.saved, result.after_tokens)  # what the meter shows too
    ctx.show(result.describe(before, ctx.usage.context_tokens if ctx.usage is not None else 0))


async def _resume(ctx: CommandContext, arg: str) -> None:
    ctx.host.resume_session(arg.strip())


async def _find(ctx: CommandContext, arg: str) -> None:
    ctx.host.find_in_transcript(arg.strip())


async def _spans(ctx: CommandContext, arg: str) -> None:
    ctx.host.open_spans(arg)


async def _permissions(ctx: CommandContext, arg: str) -> None:
    from co_tui.permissions.listing import permissions_table, remove_saved_rule

    words = arg.split()
    if not words:
        ctx.show(permissions_table(ctx.deps.permissions))
    elif words[0] == "remove" and len(words) == 2 and words[1].isdigit():
        ctx.show(remove_saved_rule(ctx.deps.permissions, words[1]))
    else:
        raise UsageError(f"{arg!r} is not something /permissions does; no rule was changed.")


async def _forget(ctx: CommandContext, arg: str) -> None:
    from co_tui.tools.memory import forget_memory

    memory_id = arg.strip().lstrip("#")
    if not memory_id.isdigit():
        what = f"{arg!r} is not a memory id" if arg else "Which memory?"
        raise UsageError(f"{what} Ids are shown by list_memories, e.g. /forget 7.")
    ctx.show(Text(forget_memory(memory_id, ctx.deps.memory.path)))  # a headline is not Markdown


async def _exit(ctx: CommandContext, arg: str) -> None:
    ctx.host.exit_app()


async def _setup(ctx: CommandContext, arg: str) -> None:
    ctx.host.set_up_provider()


async def _export(ctx: CommandContext, arg: str) -> None:
    from co_tui.session.export import ExportError

    try:
        ctx.show(Text(await ctx.host.export_session(arg.strip())))
    except ExportError as exc:
        ctx.show(Text(str(exc)))


async def _trust(ctx: CommandContext, arg: str) -> None:
    ctx.show(Text(await ctx.host.trust_project()))


BUILTIN_COMMANDS: dict[str, SlashCommand] = {
    "help": SlashCommand("help", "list commands and keys", _help),
    "new": SlashCommand(
        "new", "start a new session (the current one stays available in /resume)", _new
    ),
    "clear": SlashCommand("clear", "the same as /new: a clear screen and a new session", _new),
    "status": SlashCommand("status", "provider, model, sandbox and integrations", _status),
    "tools": SlashCommand("tools", "the tools the assistant can call, by source", _tools),
    "skills": SlashCommand("skills", "the skills the assistant can load", _skills),
    "history": SlashCommand("history", "turns, messages and tokens in this session", _history),
    "yolo": SlashCommand(
        "yolo", "toggle approving every tool call without asking", _yolo, "/yolo [on|off]"
    ),
    "model": SlashCommand(
        "model", "choose a model of any provider, or switch to one", _model, "/model [name]"
    ),
    "setup": SlashCommand(
        "setup", "add Gemini, an OpenAI-compatible server, Ollama or a larger local model", _setup
    ),
    "copy": SlashCommand(
        "copy", "copy the last answer, or its n-th code block", _copy, "/copy [n]"
    ),
    "forget": SlashCommand("forget", "delete a saved memory by its id", _forget, "/forget <id>"),
    "find": SlashCommand("find", "search the conversation (also Ctrl+F)", _find, "/find [text]"),
    "spans": SlashCommand("spans", "the live span viewer (also F2)", _spans, "/spans [filter]"),
    "compact": SlashCommand(
        "compact", "summarise the conversation to free context", _compact, "/compact [focus]"
    ),
    "resume": SlashCommand("resume", "open an earlier session", _resume, "/resume [id]"),
    "export": SlashCommand(
        "export",
        "write this session as Markdown (to your data folder's exports, or [file])",
        _export,
        "/export [file]",
    ),
    "trust": SlashCommand(
        "trust", "review this project's files for co-tui, and trust them or not", _trust
    ),
    "permissions": SlashCommand(
        "permissions",
        "the permission rules in force; remove one saved for this project",
        _permissions,
        "/permissions [remove N]",
    ),
    "serve": SERVE_COMMAND,
    "jobs": JOBS_COMMAND,
    "inbox": INBOX_COMMAND,
    "exit": SlashCommand("exit", "leave co-tui (also /quit, Ctrl+Q)", _exit),
    "quit": SlashCommand("quit", "leave co-tui (also /exit, Ctrl+Q)", _exit),
}


COMMANDS.update(BUILTIN_COMMANDS)  # the registry holds them from the moment this module loads
