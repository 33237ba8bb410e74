"""CoDeps: the per-session runtime resources every tool receives through RunContext.

One instance per chat session; mutable session state lives here, never in module globals.
Every resource is a typed field (no dict of string keys): what a tool reads is visible
here, and a test sets the same fields the application does.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from co_tui.config.endpoints import GoogleEndpoints, SlackEndpoints
from co_tui.config.settings import DEFAULT_SAFE_COMMANDS, Settings
from co_tui.context.compaction import ContextWindow
from co_tui.integrations.google_auth import GoogleSession
from co_tui.integrations.retry import RetryPolicy
from co_tui.memory.config import MemoryConfig
from co_tui.permissions.ruleset import PermissionRules
from co_tui.sandbox import SandboxChoice, SandboxProtocol, select_sandbox
from co_tui.telemetry.tracing import traced_sandbox
from co_tui.web.config import WebConfig

if TYPE_CHECKING:
    from co_tui.config.trust.project_files import ProjectView
    from co_tui.integrations.mcp import MCPConnection
    from co_tui.knowledge.notes_index import NotesIndex
    from co_tui.protocol.frontend import FrontendProtocol
    from co_tui.protocol.prompt_piece import PromptPiece


def new_session_id() -> str:
    return str(uuid.uuid4())


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class TurnScope:
    """What one turn hands the tools and the send window. turn/runner.py's TurnRunner sets a
    fresh one when a turn starts and an empty one when it ends; nothing else replaces it."""

    # The turn's frontend: sub-agents started by its tools (agent/delegate.py) report here.
    frontend: FrontendProtocol | None = None
    # tool_call_id -> the command auto-approved as read-only: the shell tool runs exactly
    # those calls in the sandbox's read-only view of the workspace.
    read_only_approvals: dict[str, str] = field(default_factory=dict)
    # tool_call_id -> the command the user approved "with network" in the dialog: the shell
    # tool runs exactly those calls with the network on. Only the turn runner writes it,
    # and only for that answer to a dialog that offered it.
    network_approvals: dict[str, str] = field(default_factory=dict)
    # The provider said the context window was exceeded: the send window summarises first.
    compact_next_request: bool = False


@dataclass
class CoDeps:
    sandbox: SandboxProtocol
    workspace: Path
    session_id: str = field(default_factory=new_session_id)
    # Session "yolo": every approval granted without asking. Changed only through
    # set_approve_all (tests/orchestrator/test_approve_all_one_writer.py holds that).
    auto_confirm: bool = False
    sandbox_reason: str = ""
    sandbox_skipped: dict[str, str] = field(default_factory=dict)
    sandbox_warning: str | None = None  # e.g. no isolating backend works: shown persistently
    # A command the user approved can reach the network: no isolation, or sandbox_network
    # "bridge". The egress guard then counts the shell as outbound.
    shell_reaches_network: bool = False

    # Tool configuration: flat values copied from Settings.
    shell_safe_commands: list[str] = field(default_factory=lambda: list(DEFAULT_SAFE_COMMANDS))
    sandbox_max_timeout: int = 600
    obsidian_vault_path: Path | None = None
    google_credentials_path: str | None = None
    slack_bot_token: str | None = field(default=None, repr=False)
    brave_search_api_key: str | None = None
    secret_values: list[str] = field(default_factory=list, repr=False)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    web: WebConfig = field(default_factory=WebConfig)
    # The permission rules: settings.json's and the ones saved for this project.
    permissions: PermissionRules = field(default_factory=PermissionRules)
    # The project's files as read once for the trust decision, and the decision: the
    # system prompt, skills and commands read the project only through it.
    project: ProjectView | None = field(default=None, repr=False)
    # Where the Google and Slack tools connect (the real services unless pointed elsewhere).
    google: GoogleEndpoints = field(default_factory=GoogleEndpoints)
    slack: SlackEndpoints = field(default_factory=SlackEndpoints)
    # How the Google and Slack tools retry a transient failure (backoff, sleep).
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    # "Now" for tools that work relative to it (the calendar's time window).
    clock: Callable[[], datetime] = field(default=utc_now, repr=False)

    # Mutable per-session state.
    # The session's connected MCP servers (ChatSession.hold_mcp sets it): /status lists
    # them and the egress guard's tool table includes their tools.
    mcp: MCPConnection | None = field(default=None, repr=False)
    google_session: GoogleSession = field(default_factory=GoogleSession, repr=False)
    slack_team_url: str | None = None  # from Slack's auth.test on first use, for message links
    notes_indexes: dict[Path, NotesIndex] = field(default_factory=dict, repr=False)  # by vault
    drive_page_tokens: dict[str, list[str]] = field(default_factory=dict)
    # What the running turn hands its tools (TurnRunner sets it; empty between turns).
    turn: TurnScope = field(default_factory=lambda: TurnScope(), repr=False)
    # What the model is sent of the transcript: the session's compactions (ChatSession's).
    context_window: ContextWindow = field(default_factory=ContextWindow, repr=False)
    # The parts of the system prompt last sent that someone other than co-tui wrote, each
    # with its origin (prompts/__init__.py sets it): the egress guard reads them.
    sent_instructions: tuple[PromptPiece, ...] = field(default=(), repr=False)

    def set_approve_all(self, on: bool) -> None:
        """Approve every later call of this session without asking (the dialog's "approve
        all", /yolo), or stop (/yolo off, a new or resumed session back to the settings')."""
        self.auto_confirm = on


def create_deps(
    settings: Settings,
    workspace: Path | None = None,
    *,
    session_id: str | None = None,
    sandbox_choice: SandboxChoice | None = None,
    project: ProjectView | None = None,
) -> CoDeps:
    """Raises SandboxUnavailable when the configured sandbox backend cannot work here."""
    workspace = (workspace or Path.cwd()).resolve()
    session_id = session_id or new_session_id()
    choice = sandbox_choice or select_sandbox(
        settings.sandbox_backend,
        workspace,
        session_id=session_id,
        output_limit=settings.shell_output_limit,
        image=settings.docker_image,
        network=settings.sandbox_network,
        mem_limit=settings.sandbox_mem_limit,
        cpus=settings.sandbox_cpus,
    )
    vault = settings.obsidian_vault_path
    return CoDeps(
        sandbox=traced_sandbox(choice.sandbox),  # a span per command when telemetry is on
        workspace=workspace,
        session_id=session_id,
        auto_confirm=settings.auto_confirm,
        sandbox_reason=choice.reason,
        sandbox_skipped=dict(choice.skipped),
        sandbox_warning=choice.warning,
        shell_reaches_network=(
            settings.sandbox_network != "none" or choice.sandbox.isolation_level == "none"
        ),
        shell_safe_commands=list(settings.shell_safe_commands),
        sandbox_max_timeout=settings.sandbox_max_timeout,
        obsidian_vault_path=Path(vault).expanduser() if vault else None,
        google_credentials_path=settings.google_credentials_path,
        slack_bot_token=settings.slack_bot_token.get_secret_value()
        if settings.slack_bot_token
        else None,
        brave_search_api_key=settings.brave_search_api_key.get_secret_value()
        if settings.brave_search_api_key
        else None,
        secret_values=settings.secret_values(),
        memory=MemoryConfig.from_settings(settings),
        web=WebConfig.from_settings(settings),
        permissions=PermissionRules.from_settings(settings.permissions, workspace),
        project=project,
    )
