"""/tools: the tools co-tui has, grouped by where they come from, with the integrations
that are not set up shown as such (what to set; their tools are not offered to the model,
tools/catalog.py). Reads local settings and files only (co_tui.session.health), never calls
a service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from co_tui.session.health import integration_rows
from co_tui.tools.catalog import integration_of

if TYPE_CHECKING:
    from co_tui.agent.build import AgentBundle
    from co_tui.config.settings import Settings


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
            groups.setdefault(integration_of(name), []).append(name)
        for integration, members in groups.items():
            shown = ", ".join(f"{n}*" if specs[n].requires_approval else n for n in members)
            row = states.get(integration) if integration else None
            label = integration or source
            if row is None or row.state == "ok":
                table.add_row(label, Text(shown), Text("ready", style="green"))
            else:
                style = "red" if row.state == "error" else "dim"
                state = row.value if row.state == "error" else f"{row.value}: not offered"
                table.add_row(
                    Text(label, style=style), Text(shown, style=style), Text(state, style=style)
                )
    return table
