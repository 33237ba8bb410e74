"""Choosing the model in the app: the model picker (/model), the provider setup dialog
(/setup), a switch when no model could start, and the embedded model's loading progress.
What the picker or the dialog chose runs as `/model NAME`, posted as a `CommandRequested`."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING

from co_tui.tui.messages import CommandRequested

if TYPE_CHECKING:
    from co_tui.llm.local.server import StartProgress
    from co_tui.tui.shell.app_base import AppBase


class ModelChoice:
    def __init__(self, app: AppBase) -> None:
        self.app = app

    def open_picker(self) -> None:
        from co_tui.tui.screens.model_picker import ADD_PROVIDER, ModelPickerScreen

        def chosen(choice: str | None) -> None:
            if choice == ADD_PROVIDER:
                self.open_setup()
            elif choice:
                self.app.post_message(CommandRequested(f"/model {choice}"))

        session = self.app.session
        resolved = session.bundle.resolved if session.bundle else None
        current = f"{resolved.provider}:{resolved.model_name}" if resolved else ""
        self.app.push_screen(ModelPickerScreen(session.settings, current), chosen)

    def open_setup(self) -> None:
        """/setup: a provider set up and tested in a dialog; the session switches to it."""
        from co_tui.tui.screens.setup import SetupDone, SetupScreen

        def done(result: SetupDone | None) -> None:
            if result is None:
                return
            self.app.session.settings = result.settings  # the saved credentials, for /model
            self.app.notice(f"Saved. Switching to {result.choice}.")
            self.app.post_message(CommandRequested(f"/model {result.choice}"))

        self.app.push_screen(SetupScreen(self.app.session.settings), done)

    async def without_agent(self, choice: str) -> None:
        """/model when no model could start: the picker, or a switch that builds the agent
        (the slash commands need one)."""
        if not choice:
            self.open_picker()
            return
        from co_tui.agent.build import build_agent
        from co_tui.llm.model_list import switched_settings

        app = self.app
        session = app.session
        settings = switched_settings(session.settings, choice)
        if settings is None:
            app.notice("No model is running: choose one with /model (or /model provider:NAME).")
            return
        try:
            bundle = await asyncio.to_thread(build_agent, settings)
            session.switch_model(bundle, settings)
            await asyncio.to_thread(session.build)  # the recorder and telemetry it skipped
            app.load_error = None
            app.notice(f"Model switched to {session.model_label()}.")
            await session.start_model(self.progress)
        except Exception as exc:  # a provider or local server that cannot be used: say so
            app.notice(f"cannot switch to {choice}: {exc}", "error")
        finally:
            app.refresh_status()

    def progress(self, update: StartProgress) -> None:
        """The embedded model's server loading, in the status bar; done, in the transcript."""
        chat = self.app.chat
        if update.done:
            chat.status = replace(chat.status, note="")
            self.app.notice(update.message)
        else:
            chat.status = replace(chat.status, note=f"{update.message} {update.elapsed_s:.1f}s")
