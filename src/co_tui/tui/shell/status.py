"""The session's status on the chat screen: the model, the sandbox and its isolation, the
warnings, the tokens and the cost, written into the screen's reactives (the status bar,
the welcome and the sidebar bind to them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_tui.context.usage import format_cost

if TYPE_CHECKING:
    from co_tui.config.trust import ProjectTrust
    from co_tui.session.chat import ChatSession
    from co_tui.tui.screens.chat import ChatScreen


def show_status(
    chat: ChatScreen, model: str, session: ChatSession | None, project: ProjectTrust | None
) -> None:
    """`session` None: the first frame, before the settings are loaded."""
    chat.model = model
    bundle = session.bundle if session is not None else None
    resolved = bundle.resolved if bundle is not None else None
    chat.welcome.local_model = resolved is not None and resolved.provider == "local"
    if session is None:  # the first frame: the settings load right after it
        chat.sandbox = chat.isolation = "…"
        return
    from co_tui.config.trust import NOT_TRUSTED

    deps = session.deps
    untrusted = project is not None and not project.trusted
    warnings = [NOT_TRUSTED if untrusted else "", (deps.sandbox_warning or "") if deps else ""]
    chat.sandbox = deps.sandbox.name if deps else "…"
    chat.isolation = deps.sandbox.isolation_level if deps else "…"
    isolating = deps is not None and deps.sandbox.isolation_level != "none"
    chat.network = deps.sandbox.network.mode if deps and isolating else ""
    chat.yolo = session.approve_all
    chat.warning = "; ".join(w for w in warnings if w)
    chat.turn_tokens = session.turn_tokens
    chat.session_tokens = session.session_tokens
    chat.context_tokens = session.totals.context_tokens
    chat.context_window = session.context_window() or 0
    chat.cost = format_cost(session.totals.cost)
