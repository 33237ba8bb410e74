"""The health table shared by `co-tui status` and `/status`. Never calls out to a service."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from co_tui import __version__
from co_tui.config.credentials import saved_provider
from co_tui.config.paths import (
    project_settings_path,
    user_credentials_path,
    user_data_dir,
    user_settings_path,
)
from co_tui.config.settings import Settings, SettingsError
from co_tui.llm.providers import ProviderError, configured_provider, resolve_model
from co_tui.sandbox import NetworkAccess, SandboxChoice, SandboxUnavailable

if TYPE_CHECKING:
    from co_tui.integrations.mcp import MCPConnection

State = Literal["ok", "warn", "error", "off"]


@dataclass(frozen=True)
class StatusRow:
    name: str
    value: str
    state: State = "ok"


def _file_row(name: str, path: Path) -> StatusRow:
    return StatusRow(name, f"{path} ({'found' if path.is_file() else 'not present'})", "ok")


def model_rows(settings: Settings) -> list[StatusRow]:
    rows: list[StatusRow] = []
    try:
        resolved = resolve_model(settings)
    except ProviderError as exc:
        provider = settings.model or configured_provider(settings)
        return [StatusRow("Provider", provider, "error"), StatusRow("Model", str(exc), "error")]
    provider = resolved.provider
    origin = "set" if (settings.llm_provider or settings.model) else "automatic"
    rows.append(StatusRow("Provider", f"{provider} ({origin})"))
    rows.append(StatusRow("Model", resolved.label))
    if resolved.detail:
        rows.append(StatusRow("Endpoint" if provider != "local" else "Model file", resolved.detail))
    if resolved.key_present is None:
        rows.append(StatusRow("API key", "not needed", "ok"))
    else:
        rows.append(
            StatusRow(
                "API key",
                "present" if resolved.key_present else "missing",
                "ok" if resolved.key_present else "warn",
            )
        )
    return rows


def credentials_row(settings: Settings) -> StatusRow:
    """Where `co-tui init` and /setup keep the provider, and whether it is the one in use
    (its path and provider only, never what else it holds)."""
    path = user_credentials_path()
    try:
        saved = saved_provider(path)
    except SettingsError as exc:
        return StatusRow("Credentials", str(exc), "error")
    if saved is None:
        return _file_row("Credentials", path)
    if settings.llm_provider == saved and not settings.model:
        return StatusRow("Credentials", f"{path} ({saved}, in use)")
    chosen = settings.model or configured_provider(settings)
    return StatusRow("Credentials", f"{path} ({saved}; not in use: {chosen} is chosen)", "off")


def sandbox_rows(choice: SandboxChoice | SandboxUnavailable) -> list[StatusRow]:
    if isinstance(choice, SandboxUnavailable):  # the configured backend does not work
        return [StatusRow("Sandbox", f"unavailable: {choice}", "error")]
    sandbox = choice.sandbox
    state: State = "warn" if sandbox.isolation_level == "none" else "ok"
    rows = [
        StatusRow(
            "Sandbox",
            f"{sandbox.name} (isolation: {sandbox.isolation_level}; {choice.reason})",
            state,
        )
    ]
    rows.append(network_row(sandbox.network))
    if choice.warning:
        rows.append(StatusRow("  warning", choice.warning, "warn"))
    for backend, why in choice.skipped.items():
        # The warning already names why (one reason for all, or each backend's): said once.
        said = choice.warning is not None and why in choice.warning
        rows.append(
            StatusRow(
                f"  {backend}",
                "skipped (why: the warning above)" if said else f"skipped: {why}",
                "off",
            )
        )
    return rows


def network_row(network: NetworkAccess) -> StatusRow:
    """What the sandbox's commands reach, and how to let one command reach the network."""
    text = f"{network.mode}: {network.explain()}"
    if network.grantable:
        text += (
            f"; to let one command reach the network, approve it with network (w) in the "
            f"approval dialog: {network.granted}"
        )
    return StatusRow("  network", text, "ok" if network.mode == "none" else "warn")


def integration_rows(settings: Settings) -> list[StatusRow]:
    from co_tui.integrations.google_auth import integration_state as google_integration_state
    from co_tui.tools.slack import integration_state as slack_integration_state

    def row(name: str, configured: bool, how: str) -> StatusRow:
        return StatusRow(
            name,
            "configured" if configured else f"not configured ({how})",
            "ok" if configured else "off",
        )

    return [
        row("Obsidian", bool(settings.obsidian_vault_path), "OBSIDIAN_VAULT_PATH"),
        StatusRow("Google", *google_integration_state(settings)),
        StatusRow("Slack", *slack_integration_state(settings)),
        row("Web search", bool(settings.brave_search_api_key), "BRAVE_SEARCH_API_KEY"),
        StatusRow("Telemetry", "on" if settings.telemetry_enabled else "off"),
    ]


def project_trust_rows(cwd: Path) -> list[StatusRow]:
    """Whether the project's files apply in full (from the stored decision)."""
    from co_tui.config.trust import (
        HOW_TO_TRUST,
        NOT_TRUSTED,
        load_project_settings,
        what_it_would_do,
    )
    from co_tui.safety.visible import visible

    try:
        project = load_project_settings(cwd).project
    except SettingsError as exc:
        return [StatusRow("  trust", str(exc), "error")]
    if project is None:
        return []
    if project.trusted:
        return [StatusRow("  trust", "trusted: applies in full")]
    why = visible(what_it_would_do(project), keep="")
    return [StatusRow("  trust", f"{NOT_TRUSTED}: {why} ({HOW_TO_TRUST}; /trust)", "warn")]


def gather_status(
    settings: Settings, cwd: Path, sandbox_choice: SandboxChoice | SandboxUnavailable
) -> list[StatusRow]:
    return [
        StatusRow("Version", __version__),
        *model_rows(settings),
        *sandbox_rows(sandbox_choice),
        *integration_rows(settings),
        _file_row("User settings", user_settings_path()),
        credentials_row(settings),
        _file_row("Project settings", project_settings_path(cwd)),
        *project_trust_rows(cwd),
        StatusRow("Data dir", str(user_data_dir())),
        StatusRow("Workspace", str(cwd)),
    ]


STATE_STYLE = {"ok": "green", "warn": "yellow", "error": "red", "off": "dim"}


def render_status_table(rows: list[StatusRow]) -> object:
    """The rows as a Rich table; values come from settings, paths and error messages, so
    their hidden characters are made visible (Rich passes ESC through to the terminal)."""
    from rich.markup import escape
    from rich.table import Table

    from co_tui.safety.visible import visible

    table = Table(title="co-tui status", show_header=True, header_style="bold")
    table.add_column("Component")
    table.add_column("State")
    for r in rows:
        value = escape(visible(r.value))
        table.add_row(r.name, f"[{STATE_STYLE[r.state]}]{value}[/]")
    return table


def mcp_status_rows(settings: Settings, connection: MCPConnection | None) -> Sequence[StatusRow]:
    """Rows for /status and `co-tui status`: one per configured server."""
    if not settings.mcp_servers:
        return [StatusRow("MCP servers", "none configured (mcp_servers in settings.json)", "off")]
    rows = [StatusRow("MCP servers", f"{len(settings.mcp_servers)} configured")]
    connected = {s.name: s for s in connection.servers} if connection else {}
    failures = connection.failures if connection else []
    failed = {f.server: f for f in failures if f.tool is None}
    for name in settings.mcp_servers:
        if name in connected:
            server = connected[name]
            how = "approval for every call" if server.approval else "no approval"
            how += ", local" if server.local else ""
            rows.append(StatusRow(f"  {name}", f"{len(server.tool_names)} tools ({how})"))
            rows.extend(
                StatusRow(f"    {f.tool}", f.message, "warn")
                for f in failures
                if f.server == name and f.tool is not None
            )
        elif name in failed:
            rows.append(StatusRow(f"  {name}", failed[name].message, "error"))
        else:
            rows.append(StatusRow(f"  {name}", "not connected in this process", "off"))
    return rows
