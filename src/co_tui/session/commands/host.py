"""What a front offers slash commands (`CommandHost`), and a front that offers none of it.

A command that needs more than the session (a screen, the clipboard, leaving the app) asks
`ctx.host`. The app implements the protocol (tui/shell/command_host.py); any other front that
runs commands (tests, a front without screens) gets `NoScreens`: each of its methods raises
`NotAvailableHere`, whose message dispatch shows, saying where to find the feature instead.
A command with a fallback of its own (/model lists the models without a picker) catches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from co_tui.agent.build import AgentBundle
    from co_tui.config.settings import Settings
    from co_tui.protocol.frontend import ApprovalReply, ApprovalRequest


class NotAvailableHere(Exception):
    """A feature this front does not have; the message says where to find it instead."""


class CommandHost(Protocol):
    """The front's side of the slash commands."""

    def resume_session(self, session_id: str) -> None:
        """Open a stored session, or the session browser for '' (/resume)."""
        ...

    def open_spans(self, span_filter: str) -> None:
        """The span viewer, filtered (/spans)."""
        ...

    def find_in_transcript(self, text: str) -> None:
        """The find bar, on a search text ('' to type one) (/find)."""
        ...

    def choose_model(self) -> None:
        """The model picker (/model without a name)."""
        ...

    def set_up_provider(self) -> None:
        """The provider setup dialog (/setup)."""
        ...

    def replace_bundle(self, bundle: AgentBundle, settings: Settings) -> None:
        """Go on with another agent and the settings it was built from (/model NAME)."""
        ...

    def copy_to_clipboard(self, text: str) -> None:
        """Put `text` on the clipboard (/copy, /serve link)."""
        ...

    def exit_app(self) -> None:
        """Leave the app (/exit, /quit)."""
        ...

    async def export_session(self, name: str) -> str:
        """Write the session as Markdown ('' for the default name); say where (/export)."""
        ...

    async def trust_project(self) -> str:
        """Ask about this project again (the trust dialog); say what now applies (/trust)."""
        ...

    async def decide_proposal(self, request: ApprovalRequest) -> ApprovalReply:
        """The user's decision on a job's proposal, in the approval dialog (/inbox approve)."""
        ...


class NoScreens:
    """A front without the app's screens, clipboard or session browser: every command that
    needs one says where to find the feature instead."""

    def resume_session(self, session_id: str) -> None:
        raise NotAvailableHere(
            "Resume from the command line: `co-tui --continue` or `co-tui --resume [id]`."
        )

    def open_spans(self, span_filter: str) -> None:
        raise NotAvailableHere(
            "The span viewer is part of the app (F2). Here: `co-tui traces` or `co-tui logs`."
        )

    def find_in_transcript(self, text: str) -> None:
        raise NotAvailableHere("There is no conversation to search here.")

    def choose_model(self) -> None:
        raise NotAvailableHere("There is no model picker here: `/model NAME` switches.")

    def set_up_provider(self) -> None:
        raise NotAvailableHere("Set up a provider with `co-tui init PROVIDER` in a shell.")

    def replace_bundle(self, bundle: AgentBundle, settings: Settings) -> None:
        raise NotAvailableHere(
            "Switching the model is not available here: change the settings instead."
        )

    def copy_to_clipboard(self, text: str) -> None:
        raise NotAvailableHere("There is no clipboard here.")

    def exit_app(self) -> None:
        raise NotAvailableHere("There is no app to leave here.")

    async def export_session(self, name: str) -> str:
        raise NotAvailableHere("Export a stored session with `co-tui sessions export ID [file]`.")

    async def trust_project(self) -> str:
        raise NotAvailableHere("Trust a project with `co-tui trust` in its folder.")

    async def decide_proposal(self, request: ApprovalRequest) -> ApprovalReply:
        raise NotAvailableHere(
            "Approve from the app's dialog, or with `co-tui inbox approve ID` in a shell."
        )
