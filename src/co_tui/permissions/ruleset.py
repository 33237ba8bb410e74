"""The permission rules in force: settings.json's, then the ones saved for this project.

Deny wins, then ask, then allow. A rule saved from the dialog never allows a shell command
the read-only classifier refuses for a reason (a writing option, a shell operator): that
command asks, and the verdict says which saved rule was held back. A rule written by hand in
settings.json is taken as written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from co_tui.permissions.matching import ToolCall, covers
from co_tui.permissions.rules import Rule, RuleError, parse_rule
from co_tui.permissions.store import ProjectRuleStore, SavedRules, StoreError

if TYPE_CHECKING:
    from co_tui.config.settings import Permissions

Action = Literal["allow", "ask", "deny"]
Origin = Literal["settings", "saved"]


@dataclass(frozen=True)
class PermissionRule:
    action: Action
    rule: Rule
    origin: Origin

    @property
    def where(self) -> str:
        return "settings.json" if self.origin == "settings" else "saved for this project"

    def label(self) -> str:
        return f"`{self.rule.text}` ({self.where})"


@dataclass(frozen=True)
class RuleVerdict:
    rule: PermissionRule | None = None  # the rule that decides (deny, ask or allow), if any
    # A saved allow rule that covers the call, not used: the read-only classifier refuses it.
    held_back: PermissionRule | None = None


@dataclass(frozen=True)
class RuleListing:
    rules: tuple[PermissionRule, ...]
    problems: tuple[str, ...] = ()  # saved rules that could not be read, and why


class PermissionRules:
    def __init__(
        self, configured: Iterable[PermissionRule] = (), store: ProjectRuleStore | None = None
    ) -> None:
        self.configured = tuple(configured)
        self.store = store
        self._listed: tuple[SavedRules, RuleListing] | None = None  # saved rules, parsed

    @classmethod
    def from_settings(cls, permissions: Permissions, workspace: Path) -> PermissionRules:
        lists: tuple[tuple[Action, list[str]], ...] = (
            ("deny", permissions.deny),
            ("ask", permissions.ask),
            ("allow", permissions.allow),
        )
        configured = [
            PermissionRule(action, parse_rule(text), "settings")
            for action, texts in lists
            for text in texts
        ]
        return cls(configured, ProjectRuleStore(workspace))

    def without_allowances(self) -> PermissionRules:
        """Only what denies or asks: settings.json's deny and ask rules, no allow rule and
        none saved for the project (the least-privilege profile of a job)."""
        return PermissionRules(entry for entry in self.configured if entry.action != "allow")

    @property
    def cannot_save(self) -> str:
        """Why rules cannot be saved for this project; "" when they can."""
        if self.store is None:
            return "no project to save rules for"
        return self.store.unavailable

    def listing(self) -> RuleListing:
        """Every rule in force: settings.json's first, then the saved ones (read now)."""
        if self.store is None:
            return RuleListing(self.configured)
        saved = self.store.load()
        if self._listed is not None and self._listed[0] is saved:  # the file is unchanged
            return self._listed[1]
        rules = list(self.configured)
        problems = [saved.problem] if saved.problem else []
        for text in saved.texts:
            try:
                rules.append(PermissionRule("allow", parse_rule(text), "saved"))
            except RuleError as exc:
                problems.append(f"saved rule `{text}` is ignored: {exc}")
        listing = RuleListing(tuple(rules), tuple(problems))
        self._listed = (saved, listing)
        return listing

    def evaluate(self, call: ToolCall, *, refused: str = "") -> RuleVerdict:
        """`refused`: why the read-only classifier refuses this shell command ("" if not)."""
        rules = self.listing().rules
        for action in ("deny", "ask"):
            for entry in rules:
                if entry.action == action and covers(entry.rule, call):
                    return RuleVerdict(entry)
        held_back: PermissionRule | None = None
        for entry in rules:
            if entry.action != "allow" or not covers(entry.rule, call):
                continue
            if entry.origin == "saved" and refused:
                held_back = held_back or entry
                continue
            return RuleVerdict(entry)
        return RuleVerdict(held_back=held_back)

    def save(self, text: str) -> PermissionRule:
        """Save an allow rule for this project. Raises RuleError or StoreError."""
        rule = parse_rule(text)
        if self.store is None or self.store.unavailable:
            raise StoreError(f"cannot save rules: {self.cannot_save}")
        self.store.add(rule.text)
        return PermissionRule("allow", rule, "saved")

    def remove(self, entry: PermissionRule) -> bool:
        """Remove a saved rule; False when it was no longer saved. Raises StoreError."""
        if entry.origin != "saved" or self.store is None:
            return False
        return self.store.remove(entry.rule.text)
