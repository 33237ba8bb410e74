"""The project's trust in the app: asked once per settings file at the start, again with
/trust; the answer is stored, and decides how the session reads the project's files."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from co_tui.config.trust import ProjectTrust
    from co_tui.tui.shell.app_base import AppBase


class ProjectTrustKeeper:
    def __init__(self, app: AppBase, reload_commands: Callable[[], Awaitable[None]]) -> None:
        """`reload_commands`: the custom commands and skills read again (the project's
        apply only once it is trusted)."""
        self.app = app
        self._reload_commands = reload_commands

    async def settle(self) -> None:
        """Ask about a project the user has not decided on for these exact files (the
        answer is stored); trusted, it applies in full, else without what waits for trust
        (nothing of it starts; its instructions are read as untrusted text)."""
        from co_tui.config.trust import NOT_TRUSTED, what_it_would_do

        app = self.app
        project = app.project
        if project is None:
            return
        if project.decision == "undecided":
            project = await self._ask(project)
            if project.trusted:
                app.session.settings = project.trusted_settings
                app.notice("trusted: this project applies in full")
        self._use(project)
        if not project.trusted:
            held = what_it_would_do(project)
            app.notice(f"{NOT_TRUSTED}: {held} (/trust to trust it)", "warning")
        app.refresh_status()

    async def ask_again(self) -> str:
        """/trust: the project's files read again and shown in the trust dialog; the answer
        is stored. Trusted, its instructions, commands and skills apply at once; its settings
        (they choose the sandbox, the servers, the providers) from the next start."""
        from co_tui.config.trust import load_project_settings

        app = self.app
        root = app.project.root if app.project is not None else app.session.workspace
        loaded = await asyncio.to_thread(load_project_settings, root)
        project = loaded.project
        if project is None:
            return "This project ships nothing for co-tui that needs your trust."
        project = await self._ask(project)
        self._use(project)
        await self._reload_commands()
        app.refresh_status()
        if not project.trusted:
            return "Not trusted: what it would change waits; its instructions are untrusted text."
        fields = type(project.trusted_settings).model_fields
        later = (
            " Its settings apply from the next start."
            if any(w.setting in fields for w in project.widenings)
            else ""
        )
        return f"Trusted: its instructions, commands and skills apply now.{later}"

    async def _ask(self, project: ProjectTrust) -> ProjectTrust:
        """The trust dialog for these files; the answer is stored and becomes the app's."""
        from co_tui.tui.screens.trust import TrustScreen

        trusted = await self.app.push_screen_wait(TrustScreen(project))
        project = self.app.project = project.decide("trusted" if trusted else "declined")
        try:
            project.remember()
        except OSError as exc:
            self.app.notice(f"cannot store the decision: {exc}", "warning")
        return project

    def _use(self, project: ProjectTrust) -> None:
        """The prompt, skills and commands read the project through this view from now on."""
        session = self.app.session
        session.project = project.view
        if session.deps is not None:
            session.deps.project = project.view
