"""`/permissions`: the rules in force as a table, numbered; removing a saved one by number."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from co_tui.permissions.ruleset import PermissionRules
from co_tui.permissions.store import StoreError

_ACTION_STYLES = {"deny": "bold magenta", "ask": "yellow", "allow": "green"}


def permissions_table(rules: PermissionRules) -> RenderableType:
    listing = rules.listing()
    parts: list[RenderableType] = []
    if listing.rules:
        table = Table(
            title=f"Permission rules ({len(listing.rules)}): deny wins, then ask, then allow",
            title_justify="left",
            box=None,
        )
        table.add_column("#", justify="right", style="dim")
        table.add_column("rule", style="bold", overflow="fold")
        table.add_column("action")
        table.add_column("from")
        for number, entry in enumerate(listing.rules, start=1):
            action = Text(entry.action, style=_ACTION_STYLES[entry.action])
            table.add_row(str(number), entry.rule.text, action, entry.where)
        parts.append(table)
    else:
        parts.append(
            Text(
                "No permission rules. Write them in settings.json under `permissions` "
                "(allow, ask, deny), or press p in the approval dialog."
            )
        )
    for problem in listing.problems:
        parts.append(Text(f"⚠ {problem}", style="yellow"))
    if any(entry.origin == "saved" for entry in listing.rules):
        parts.append(Text("`/permissions remove N` removes saved rule N", style="dim"))
    if rules.store is not None and not rules.cannot_save:
        parts.append(Text(f"saved for this project in {rules.store.path}", style="dim"))
    return Group(*parts)


def remove_saved_rule(rules: PermissionRules, number: str) -> Text:
    entries = rules.listing().rules
    if not entries:
        return Text("There are no permission rules to remove.")
    if not number.isdigit() or not 1 <= int(number) <= len(entries):
        return Text(f"No rule {number}: `/permissions` lists them, numbered 1 to {len(entries)}.")
    entry = entries[int(number) - 1]
    if entry.origin != "saved":
        return Text(
            f"Rule {number} (`{entry.rule.text}`) comes from settings.json: edit that file "
            "to remove it."
        )
    try:
        removed = rules.remove(entry)
    except StoreError as exc:
        return Text(f"Could not remove `{entry.rule.text}`: {exc}", style="red")
    if not removed:
        return Text(f"`{entry.rule.text}` was no longer saved.")
    return Text(f"Removed the saved rule `{entry.rule.text}`: those calls ask again.")
