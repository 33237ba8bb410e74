"""Load settings with the project layer applied only as far as the user trusts the project.

The project's `.co-tui/settings.json` sits in the working directory, which the sandbox (and
whoever made the repository) can write. What it would widen (widening.py) applies when the
user has trusted this project with this exact file; until then it is dropped and everything
that only narrows applies at once. Nothing from an untrusted project starts a process.

Without a project settings file neither the trust store nor the widening checks are loaded
(they are imported where used): most directories have none, and start-up time is the
user's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from co_tui.config import Settings, merge_layers, read_layers
from co_tui.paths import PROJECT_DIR_NAME, SETTINGS_FILE_NAME

if TYPE_CHECKING:
    from co_tui.trust.store import Decision, TrustStore
    from co_tui.trust.widening import Widening

    ProjectDecision = Decision | Literal["undecided"]
PROJECT_FILE = f"{PROJECT_DIR_NAME}/{SETTINGS_FILE_NAME}"
NOT_TRUSTED = "project settings not trusted"


@dataclass(frozen=True)
class ProjectTrust:
    """A project whose settings would widen what co-tui may do, and the user's decision."""

    root: Path  # the project's real path: the store's key
    settings_file: Path
    sha256: str  # of the settings file's bytes, exactly as parsed
    widenings: tuple[Widening, ...]
    decision: ProjectDecision
    trusted_settings: Settings  # every layer, the project's in full
    untrusted_settings: Settings  # the project's layer without what it would widen

    @property
    def trusted(self) -> bool:
        return self.decision == "trusted"

    @property
    def settings(self) -> Settings:
        """The settings in effect for this decision."""
        return self.trusted_settings if self.trusted else self.untrusted_settings

    def decide(self, decision: Decision) -> ProjectTrust:
        return replace(self, decision=decision)

    def remember(self, store: TrustStore | None = None) -> None:
        """Store the decision for this exact settings file. Raises OSError."""
        if self.decision != "undecided":
            from co_tui.trust.store import TrustStore

            (store or TrustStore()).record(self.root, self.sha256, self.decision)


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings  # in effect
    project: ProjectTrust | None = None  # None: no project settings, or nothing they widen


@dataclass(frozen=True)
class ProjectCommands:
    """The project's custom slash commands (.co-tui/commands/*.md): prompts the user can send
    with one word, written by whoever wrote the repository, so they are trusted with the
    project's settings and a change to any of them asks again."""

    folder: Path
    names: tuple[str, ...]
    digest: str  # of every command's name and text

    def widening(self) -> Widening:
        from co_tui.trust.widening import Widening, join_words

        names = [f"/{name}" for name in self.names]
        return Widening(
            f"{PROJECT_DIR_NAME}/commands",
            "data",
            f"add the slash command{'s' if len(names) > 1 else ''} {join_words(names)}",
            "their text is sent to the model when you type them",
        )


def project_commands(cwd: Path) -> ProjectCommands | None:
    """None when the project has no usable command files (most directories)."""
    folder = cwd / PROJECT_DIR_NAME / "commands"
    if not folder.is_dir():
        return None
    from co_tui.custom_commands import FOLDER, read_folder

    commands = read_folder(cwd, f"{PROJECT_DIR_NAME}/{FOLDER}", "project").commands
    if not commands:
        return None
    digest = hashlib.sha256()
    for name, command in sorted(commands.items()):
        digest.update(f"{name}\0{command.description}\0{command.template}\0".encode())
    return ProjectCommands(folder.resolve(), tuple(sorted(commands)), digest.hexdigest())


def load_project_settings(
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    trust_project: bool = False,
    store: TrustStore | None = None,
) -> LoadedSettings:
    """Every settings layer; the project's in full only when the user trusts it: stored for
    this exact file, or `trust_project` (for this run: `.project.remember()` stores it).
    Raises SettingsError. Reads the trust store, never writes it."""
    layers = read_layers(cwd, env, overrides)  # each validated as written: errors name it
    full = merge_layers(layers)
    project = next((layer for layer in layers if layer.kind == "project"), None)
    commands = project_commands(cwd)
    if project is None and commands is None:
        return LoadedSettings(full)
    from co_tui.trust.store import TrustStore
    from co_tui.trust.widening import review_widenings

    widenings: tuple[Widening, ...] = ()
    untrusted = full
    if project is not None:
        others = [layer for layer in layers if layer is not project]
        review = review_widenings(merge_layers(others), full)
        widenings = review.widenings
        narrowed = project.with_values(project.values | _as_written(full, review.narrowed))
        untrusted = merge_layers([narrowed if layer is project else layer for layer in layers])
    if commands is not None:
        widenings = (*widenings, commands.widening())
    if not widenings:
        return LoadedSettings(full)
    # The decision is stored for these exact settings and commands: a change asks again.
    sha256 = project.sha256 if project is not None else ""
    if commands is not None:
        sha256 = hashlib.sha256(f"{sha256}:{commands.digest}".encode()).hexdigest()
    root = cwd.resolve()
    stored = (store or TrustStore()).decision(root, sha256)
    trust = ProjectTrust(
        root=root,
        settings_file=Path(project.origin) if project is not None else root / PROJECT_DIR_NAME,
        sha256=sha256,
        widenings=widenings,
        decision="trusted" if trust_project else stored or "undecided",
        trusted_settings=full,
        untrusted_settings=untrusted,
    )
    return LoadedSettings(trust.settings, trust)


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
    """'would start the MCP server `x` and turn on approve-all' (values as written: show
    them through co_tui.visible)."""
    from co_tui.trust.widening import summary_sentence

    return f"would {summary_sentence(project.widenings)}"


def untrusted_notice(project: ProjectTrust | None) -> str | None:
    """The one line `co-tui -p` prints when the project's widening settings are ignored."""
    if project is None or project.trusted:
        return None
    return (
        f"this project's {PROJECT_FILE} {what_it_would_do(project)}; ignored "
        "(pass --trust-project to trust it)"
    )
