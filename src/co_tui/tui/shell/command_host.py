"""The app as the slash commands' host (session/commands/host.py `CommandHost`): each
thing a command asks of the front, answered by the room of the app that does it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from co_tui.agent.build import AgentBundle
    from co_tui.config.settings import Settings
    from co_tui.protocol.frontend import ApprovalReply, ApprovalRequest
    from co_tui.tui.shell.app_base import AppBase
    from co_tui.tui.shell.model_choice import ModelChoice
    from co_tui.tui.shell.project_trust import ProjectTrustKeeper
    from co_tui.tui.shell.session_switcher import SessionSwitcher


class AppCommandHost:
    def __init__(
        self,
        app: AppBase,
        sessions: SessionSwitcher,
        models: ModelChoice,
        trust: ProjectTrustKeeper,
    ) -> None:
        self.app = app
        self.sessions = sessions
        self.models = models
        self.trust = trust

    def resume_session(self, session_id: str) -> None:
        self.sessions.open_session(session_id)

    def open_spans(self, span_filter: str) -> None:
        from co_tui.tui.screens.spans import SpanScreen

        if not isinstance(self.app.screen, SpanScreen):
            self.app.push_screen(SpanScreen(initial_filter=span_filter))

    def find_in_transcript(self, text: str) -> None:
        self.app.chat.open_find(text)

    def choose_model(self) -> None:
        self.models.open_picker()

    def set_up_provider(self) -> None:
        self.models.open_setup()

    def replace_bundle(self, bundle: AgentBundle, settings: Settings) -> None:
        self.app.session.switch_model(bundle, settings)
        self.app.refresh_status()

    def copy_to_clipboard(self, text: str) -> None:
        self.app.copy_to_clipboard(text)

    def exit_app(self) -> None:
        self.app.exit()

    async def export_session(self, name: str) -> str:
        from co_tui.session.export import export_open_session

        return await export_open_session(self.app.session, name)

    async def trust_project(self) -> str:
        return await self.trust.ask_again()

    async def decide_proposal(self, request: ApprovalRequest) -> ApprovalReply:
        return await self.app.frontend.prompt_approval(request)
