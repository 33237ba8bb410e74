"""/tools: the tools the model is offered, grouped by where they come from, with the
integrations that are not set up shown as such (and what to set). Reads local settings and
files only (co_tui.session.health), never calls a service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from co_tui.session.health import integration_rows

if TYPE_CHECKING:
    from co_tui.agent.build import AgentBundle
    from co_tui.config.settings import Settings

# The module a built-in tool lives in -> the integration row of co_tui.session.health it needs.
_INTEGRATION_OF_MODULE = {
    "google_drive": "Google",
    "google_gmail": "Google",
    "google_calendar": "Google",
    "slack": "Slack",
    "obsidian": "Obsidian",
}
_INTEGRATION_OF_TOOL = {"web_search": "Web search"}


def _integration(tool_name: str) -> str | None:
    from co_tui.tools.catalog import FUNCTION_TOOLS

    modules = {func.__name__: func.__module__.rsplit(".", 1)[-1] for func in FUNCTION_TOOLS}
    module = modules.get(tool_name, "")
    return _INTEGRATION_OF_TOOL.get(tool_name) or _INTEGRATION_OF_MODULE.get(module)


def tools_table(bundle: AgentBundle, settings: Settings) -> Table:
    states = {row.name: row for row in integration_rows(settings)}
    specs = bundle.tool_specs
    table = Table(title=f"Tools ({len(specs)})", title_justify="left", box=None)
    table.add_column("Source", style="bold", no_wrap=True)
    table.add_column("Tools (* asks for approval)")
    table.add_column("State")
    for source, names in bundle.tools_by_source().items():
        groups: dict[str | None, list[str]] = {}
        for name in names:
            groups.setdefault(_integration(name), []).append(name)
        for integration, members in groups.items():
            shown = ", ".join(f"{n}*" if specs[n].requires_approval else n for n in members)
            row = states.get(integration) if integration else None
            label = integration or source
            if row is None or row.state == "ok":
                table.add_row(label, Text(shown), Text("ready", style="green"))
            else:
                style = "red" if row.state == "error" else "dim"
                table.add_row(
                    Text(label, style=style), Text(shown, style=style), Text(row.value, style=style)
                )
    return table
