"""Slash commands in the app: the user's and a trusted project's custom commands and the
skills loaded onto the chat screen, and a /command run in the app's "command" worker with
the session's data and the app as its host. What a command shows comes after it, so /new's
note lands in the new transcript."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from co_tui.tui.messages import CommandDone, ConversationCleared

if TYPE_CHECKING:
    from co_tui.session.commands.host import CommandHost
    from co_tui.tui.shell.app_base import AppBase
    from co_tui.tui.shell.model_choice import ModelChoice


async def load_custom_commands(app: AppBase) -> None:
    """The user's /commands and, in a trusted project, the project's, then the skills
    (a /name each where no command has it), onto the chat screen; what was skipped is said
    once, here."""
    from co_tui.session import commands
    from co_tui.session.commands import custom as custom_commands
    from co_tui.session.commands import skill_commands

    project = app.session.project
    loaded = await asyncio.to_thread(custom_commands.load, project, builtins=commands.COMMANDS)
    taken = {*commands.COMMANDS, *loaded.commands}
    skills = await asyncio.to_thread(skill_commands.load, project, taken)
    app.chat.custom_commands = {**loaded.commands, **skills}
    for problem in loaded.problems:
        app.notice(problem, "warning")


class CommandRunner:
    def __init__(self, app: AppBase, host: CommandHost, models: ModelChoice) -> None:
        self.app = app
        self.host = host
        self.models = models

    def run(self, text: str) -> None:
        self.app.run_worker(self._run(text), name="command", group="command", exit_on_error=False)

    async def _run(self, text: str) -> None:
        from co_tui.session import commands

        app = self.app
        ready = await app.wait_ready()
        session = app.session
        if not ready and not session.ready:
            name, _, arg = text.strip().partition(" ")
            if name == "/model" and session.deps is not None:
                await self.models.without_agent(arg.strip())
                return
            if name == "/setup" and session.deps is not None:
                self.models.open_setup()
                return
            app.notice(f"not available: {app.load_error}", "error")
            return
        assert session.deps is not None and session.bundle is not None
        shown: list[object] = []  # shown after the command, so /new's note is in the new transcript
        ctx = commands.CommandContext(
            message_history=session.history,
            deps=session.deps,
            bundle=session.bundle,
            settings=session.settings,
            show=shown.append,
            host=self.host,
            session_tokens=session.session_tokens,
            usage=session.totals,
            last_answer=session.last_answer,
            session_id=session.session_id,
            custom=app.chat.custom_commands,
        )
        try:
            outcome = await commands.dispatch(ctx, text)
            if not outcome.known:
                app.notice(outcome.hint or "unknown command", "warning")
                return
            if outcome.history is not None:
                await session.replace_history(outcome.history)
                if not outcome.history:
                    app.chat.post_message(ConversationCleared())
            else:
                await session.save()  # what a command changed outside the history (/compact)
        except Exception as exc:
            app.notice(f"{text}: {type(exc).__name__}: {exc}", "error")
        finally:
            for content in shown:
                app.show_output(content)
            app.refresh_status()
            app.post_message(CommandDone())
