"""Load settings with the project applied only as far as the user trusts it.

The project's files (its `.co-tui/settings.json`, AGENTS.md, `.co-tui/instructions.md`,
knowledge, commands and skills) sit in the working directory, which the sandbox, and whoever
made the repository, can write. They are read once (project_files.py); the decision is
stored for exactly those bytes, and what loads is what was read.

Until the user trusts the project:
- of its settings, only what co_tui.config.trust.allowlist lets an untrusted project change
  applies (what narrows, what is inert); everything else waits, named in the notice;
- its commands and skills wait;
- its instructions and knowledge are read as untrusted text: fenced for the model, and
  while they are in the context outbound calls ask (the egress guard).
Nothing of an untrusted project starts a process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from co_tui.config.paths import PROJECT_DIR_NAME, SETTINGS_FILE_NAME
from co_tui.config.settings import Settings, SettingsLayer, merge_layers, read_layers
from co_tui.config.trust.project_files import (
    COMMANDS,
    INSTRUCTIONS,
    KNOWLEDGE,
    SETTINGS,
    SKILLS,
    ProjectFiles,
    ProjectView,
    read_project_files,
)

if TYPE_CHECKING:
    from co_tui.config.trust.store import Decision, TrustStore
    from co_tui.config.trust.widening import Widening

    ProjectDecision = Decision | Literal["undecided"]
PROJECT_FILE = f"{PROJECT_DIR_NAME}/{SETTINGS_FILE_NAME}"
NOT_TRUSTED = "project not trusted"
HOW_TO_TRUST = "pass --trust-project, or run `co-tui trust` here"


@dataclass(frozen=True)
class ProjectTrust:
    """A project with something to trust (see the module), and the user's decision."""

    root: Path  # the project's real path: the store's key
    files: ProjectFiles  # every project file, as read once
    widenings: tuple[Widening, ...]  # what waits for trust: settings, commands, skills
    untrusted_texts: tuple[str, ...]  # its instructions and knowledge, read as untrusted
    decision: ProjectDecision
    trusted_settings: Settings  # every layer, the project's in full
    untrusted_settings: Settings  # the project's layer without what waits

    @property
    def sha256(self) -> str:
        return self.files.digest

    @property
    def settings_file(self) -> Path:
        return self.root / PROJECT_FILE

    @property
    def trusted(self) -> bool:
        return self.decision == "trusted"

    @property
    def settings(self) -> Settings:
        """The settings in effect for this decision."""
        return self.trusted_settings if self.trusted else self.untrusted_settings

    @property
    def view(self) -> ProjectView:
        return ProjectView(self.files, self.trusted)

    def decide(self, decision: Decision) -> ProjectTrust:
        return replace(self, decision=decision)

    def remember(self, store: TrustStore | None = None) -> None:
        """Store the decision for these exact files. Raises OSError."""
        if self.decision != "undecided":
            from co_tui.config.trust.store import TrustStore

            (store or TrustStore()).record(self.root, self.sha256, self.decision)

    def held_back(self) -> list[str]:
        """What waits for trust, one phrase each, naming the setting where the words do not."""
        phrases = []
        for widening in self.widenings:
            named = widening.setting in widening.summary or widening.setting.startswith(".")
            phrases.append(widening.summary + ("" if named else f" ({widening.setting})"))
        return phrases


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings  # in effect
    project: ProjectTrust | None = None  # None: nothing in the project to trust
    files: ProjectFiles | None = None  # the project's files as read (None: not read)
    problems: tuple[str, ...] = ()  # project files that could not be read, and why

    @property
    def view(self) -> ProjectView | None:
        """The project as the session reads it (None: no project files)."""
        if self.project is not None:
            return self.project.view
        if self.files is None or self.files.empty:
            return None
        return ProjectView(self.files, trusted=False)


def _names(files: ProjectFiles, folder: str, suffix: str = "") -> list[str]:
    prefix = f"{folder}/"
    found = {rel[len(prefix) :].split("/")[0] for rel in files.files if rel.startswith(prefix)}
    return sorted(name.removesuffix(suffix) for name in found if name.endswith(suffix))


def _file_widenings(files: ProjectFiles) -> list[Widening]:
    """The project's commands and skills: prompts and instructions someone else wrote."""
    from co_tui.config.trust.widening import Widening, join_words

    found = []
    commands = [f"/{name}" for name in _names(files, COMMANDS, ".md")]
    if commands:
        found.append(
            Widening(
                f"{PROJECT_DIR_NAME}/commands",
                "data",
                f"add the slash command{'s' if len(commands) > 1 else ''} {join_words(commands)}",
                "their text is sent to the model when you type them",
            )
        )
    skills = _names(files, SKILLS)
    if skills:
        found.append(
            Widening(
                f"{PROJECT_DIR_NAME}/skills",
                "data",
                f"add the skill{'s' if len(skills) > 1 else ''} {join_words(skills)}",
                "instructions the model follows when it loads them",
            )
        )
    return found


def _untrusted_texts(files: ProjectFiles) -> tuple[str, ...]:
    """The project's instructions and knowledge files that were read."""
    texts = [rel for rel in INSTRUCTIONS if rel in files.files]
    texts += [rel for rel in sorted(files.files) if rel.startswith(f"{KNOWLEDGE}/")]
    return tuple(texts)


def _problems(files: ProjectFiles) -> tuple[str, ...]:
    """The settings file (or the .co-tui folder) that could not be read, and why; the other
    files' loaders say so of their own."""
    problems = [
        f"{files.root / rel} not read: it {why.reason}"
        for rel, why in files.refused.items()
        if rel in (SETTINGS, PROJECT_DIR_NAME)
    ]
    if SETTINGS in files.truncated:
        problems.append(f"{files.root / SETTINGS} not read: it is too large")
    return tuple(sorted(problems))


def load_project_settings(
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    trust_project: bool = False,
    store: TrustStore | None = None,
) -> LoadedSettings:
    """Every settings layer; the project's in full only when the user trusts it: stored for
    these exact files, or `trust_project` (for this run: `.project.remember()` stores it).
    Raises SettingsError. Reads the trust store, never writes it."""
    files = read_project_files(cwd)
    settings_data = None if SETTINGS in files.truncated else files.files.get(SETTINGS)
    layers = read_layers(cwd, env, overrides, settings_data)  # each validated: errors name it
    full = merge_layers(layers)
    problems = _problems(files)
    project_layer = next((layer for layer in layers if layer.kind == "project"), None)
    widenings: list[Widening] = []
    untrusted = full
    if project_layer is not None:
        widenings, untrusted = _review(layers, project_layer, full)
    widenings += _file_widenings(files)
    texts = _untrusted_texts(files)
    if not widenings and not texts:
        return LoadedSettings(full, None, files, problems)
    from co_tui.config.trust.store import TrustStore

    root = cwd.resolve()
    stored = (store or TrustStore()).decision(root, files.digest)
    trust = ProjectTrust(
        root=root,
        files=replace(files, root=root),
        widenings=tuple(widenings),
        untrusted_texts=texts,
        decision="trusted" if trust_project else stored or "undecided",
        trusted_settings=full,
        untrusted_settings=untrusted,
    )
    return LoadedSettings(trust.settings, trust, trust.files, problems)


def _review(
    layers: list[SettingsLayer], project: SettingsLayer, full: Settings
) -> tuple[list[Widening], Settings]:
    """What of the project's settings waits for trust, and the settings meanwhile."""
    from co_tui.config.trust.allowlist import review_project_settings

    others = [layer for layer in layers if layer is not project]
    review = review_project_settings(merge_layers(others), full)
    narrowed = project.with_values(project.values | _as_written(full, review.narrowed))
    untrusted = merge_layers([narrowed if layer is project else layer for layer in layers])
    return list(review.widenings), untrusted


def _as_written(settings: Settings, values: dict[str, Any]) -> dict[str, Any]:
    """`values` (setting -> value) as plain data, like a file's, so that the layers above
    still merge into them key by key."""
    return settings.model_copy(update=values).model_dump(include=set(values))


def load_settings(
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """The settings in effect: every layer, the project's only as far as the user trusts it
    (load_project_settings has the details). Raises SettingsError with a one-line message."""
    return load_project_settings(cwd or Path.cwd(), env=env, overrides=overrides).settings


def what_it_would_do(project: ProjectTrust) -> str:
    """'held back: start the MCP server `x`; AGENTS.md read as untrusted text' (values as
    written: show them through co_tui.safety.visible)."""
    from co_tui.config.trust.widening import join_words

    parts = []
    if project.widenings:
        parts.append(f"held back: {join_words(project.held_back())}")
    if project.untrusted_texts:
        parts.append(f"{join_words(list(project.untrusted_texts))} read as untrusted text")
    return "; ".join(parts)


def trust_summary(project: ProjectTrust, *, texts: bool = False) -> list[str]:
    """What trusting `project` means, for `co-tui trust`: what waits, then its text files
    (with `texts`, each file's text as it would load). Values as written: escape them."""
    lines = [f"project {project.root} ({project.decision})"]
    lines += [f"- would {phrase}" for phrase in project.held_back()]
    shown = [rel for rel in sorted(project.files.files) if rel != SETTINGS]
    for rel in shown:
        size = len(project.files.files[rel])
        lines.append(f"- ships {rel} ({size:,} bytes)")
        if texts:
            lines.append(project.files.text(rel) or "")
    return lines


def stored_view(workspace: Path, store: TrustStore | None = None) -> ProjectView | None:
    """The project in `workspace` as a session reads it, trusted as the user decided (for a
    front that did not load the settings itself); None when it ships no files for co-tui."""
    from co_tui.config.trust.store import TrustStore

    root = workspace.resolve()
    files = read_project_files(root)
    if files.empty:
        return None
    decision = (store or TrustStore()).decision(root, files.digest)
    return ProjectView(files, trusted=decision == "trusted")


def untrusted_notice(project: ProjectTrust | None) -> str | None:
    """The one line `co-tui -p` prints about an untrusted project: what was held back."""
    if project is None or project.trusted:
        return None
    return f"{NOT_TRUSTED}: {what_it_would_do(project)} ({HOW_TO_TRUST})"
