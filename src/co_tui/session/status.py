"""The session's status as one value: the model, the sandbox and its isolation, the warnings,
the MCP servers, the tokens, the context and the cost.

A front derives a `SessionStatus` from its `ChatSession` (`session_status`) whenever the
session may have changed, and between two derivations follows the turn's usage events
(`turn_started`, `turn_used`) and its own passing note with `dataclasses.replace`. The app's
chat screen holds the value in one reactive; the status bar, the welcome and the sidebar
bind to it.

No Textual here: the value is plain data, its fields already in the words the user sees
(the cost formatted, the warnings joined).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from co_tui.context.usage import format_cost

if TYPE_CHECKING:
    from co_tui.config.trust import ProjectTrust
    from co_tui.session.chat import ChatSession

UNKNOWN = "?"  # before the first derivation
LOADING = "…"  # the session exists, its sandbox does not yet


@dataclass(frozen=True, slots=True)
class SessionStatus:
    model: str = UNKNOWN  # "provider:model", or "loading model…" / "no model"
    local_model: bool = False  # the embedded model answers (no provider is set up)
    sandbox: str = UNKNOWN
    isolation: str = UNKNOWN  # the sandbox's isolation level; "none" isolates nothing
    network: str = ""  # an isolating sandbox's network mode ("none"); "" otherwise
    approve_all: bool = False  # yolo: every call runs without asking
    warning: str = ""  # the project's and the sandbox's warnings, shown all session
    mcp: str = ""  # e.g. "MCP 2/3 (failed: broken)"; "" when no server is connected
    note: str = ""  # a passing note, e.g. "retrying in 3s", the local model loading
    turn_tokens: int = 0  # this turn's input + output so far
    session_tokens: int = 0  # the session's total, this turn included
    context_tokens: int = 0  # the next request's size (the last response's in + out)
    context_window: int = 0  # the model's window; 0 when unknown
    cost: str = ""  # the session's estimated cost; "" when the model is not priced
    inbox: int = 0  # what jobs proposed and waits for the user (/inbox); not the session's

    @property
    def context_percent(self) -> int | None:
        """How full the context window is, in percent; None when the window is unknown."""
        if not self.context_window:
            return None
        return round(100 * self.context_tokens / self.context_window)

    def turn_started(self) -> SessionStatus:
        return replace(self, turn_tokens=0)

    def turn_used(self, tokens: int) -> SessionStatus:
        """The turn's usage so far (`tokens`: its input + output), added to what the session
        had used before the turn."""
        before = self.session_tokens - self.turn_tokens
        return replace(self, turn_tokens=tokens, session_tokens=before + tokens)


def session_status(
    model: str,
    session: ChatSession | None,
    project: ProjectTrust | None,
    *,
    note: str = "",
    inbox: int = 0,
) -> SessionStatus:
    """The status of `session` now. `model`: the label to show (the front knows whether the
    model is still loading or failed); `note`: the passing note to keep showing; `inbox`:
    the waiting proposals the front last counted.
    `session` None: the first frame, before the settings are loaded."""
    if session is None:
        return SessionStatus(
            model=model, sandbox=LOADING, isolation=LOADING, note=note, inbox=inbox
        )
    bundle, deps = session.bundle, session.deps
    resolved = bundle.resolved if bundle is not None else None
    sandbox = deps.sandbox if deps is not None else None
    isolating = sandbox is not None and sandbox.isolation_level != "none"
    return SessionStatus(
        model=model,
        local_model=resolved is not None and resolved.provider == "local",
        sandbox=sandbox.name if sandbox is not None else LOADING,
        isolation=sandbox.isolation_level if sandbox is not None else LOADING,
        network=sandbox.network.mode if sandbox is not None and isolating else "",
        approve_all=session.approve_all,
        warning=_warning(project, deps.sandbox_warning if deps is not None else None),
        mcp=_mcp_summary(session),
        note=note,
        inbox=inbox,
        turn_tokens=session.turn_tokens,
        session_tokens=session.session_tokens,
        context_tokens=session.totals.context_tokens,
        context_window=session.context_window() or 0,
        cost=format_cost(session.totals.cost),
    )


def _warning(project: ProjectTrust | None, sandbox_warning: str | None) -> str:
    """The project's warning (settings not trusted), then the sandbox's."""
    untrusted = ""
    if project is not None and not project.trusted:
        from co_tui.config.trust import NOT_TRUSTED

        untrusted = NOT_TRUSTED
    return "; ".join(w for w in (untrusted, sandbox_warning or "") if w)


def _mcp_summary(session: ChatSession) -> str:
    connection = session.mcp
    if connection is None:
        return ""
    from co_tui.agent.mcp import mcp_status_summary

    return mcp_status_summary(connection)
