"""Skills: directories holding a SKILL.md (YAML frontmatter `name`, `description`; a body of
instructions; optional files beside it).

Found in three places, later ones overriding earlier ones by name:
1. shipped: the skill folders inside this package
2. user: user_config_dir()/skills/<skill>/SKILL.md
3. project: <workspace>/.co-tui/skills/<skill>/SKILL.md

The system prompt lists names and descriptions only (`skills_prompt_section`); the model
calls `load_skill(name)` for the body when a task needs it. A malformed SKILL.md becomes a
`SkillProblem`, never an exception.

Every skill file is read through co_tui.safe_read: a SKILL.md or extra file is read only
from inside its location's root (the package, user_config_dir(), the workspace) and never
through a symbolic link. A linked skill folder or SKILL.md is refused and shown as a
problem; linked extra files are not listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from co_tui.paths import PROJECT_DIR_NAME, user_config_dir
from co_tui.safe_read import (
    LINK,
    NotFound,
    ReadRefused,
    list_within,
    read_bytes_within,
    walk_within,
)

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256_000
MAX_DESCRIPTION = 1024
MAX_LISTED_FILES = 50
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
SHIPPED_DIR = Path(__file__).resolve().parent

Origin = Literal["shipped", "user", "project"]


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    path: Path  # the skill's directory
    origin: Origin
    root: Path  # the directory its files must stay inside (see SkillLocation)
    files: tuple[str, ...] = ()  # other files in the directory, relative, sorted

    @property
    def relative(self) -> str:
        """The skill's directory below `root`."""
        return self.path.relative_to(self.root).as_posix()


@dataclass(frozen=True)
class SkillProblem:
    path: Path
    message: str


@dataclass
class SkillCatalog:
    skills: dict[str, Skill] = field(default_factory=dict)  # sorted by name
    problems: list[SkillProblem] = field(default_factory=list)
    overridden: list[Skill] = field(default_factory=list)  # shadowed by a later location

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name.strip())


@dataclass(frozen=True)
class SkillLocation:
    """Skills live in root/folder: nothing below root is reached through a link, so for
    the user and the project the root is the config dir or workspace itself (a linked
    `skills` or `.co-tui` folder is refused too)."""

    origin: Origin
    root: Path
    folder: str  # below root, "" for the root itself

    @property
    def path(self) -> Path:
        return self.root / self.folder if self.folder else self.root


def _locations(workspace: Path | None) -> list[SkillLocation]:
    locations = [
        SkillLocation("shipped", SHIPPED_DIR, ""),
        SkillLocation("user", user_config_dir(), "skills"),
    ]
    if workspace is not None:
        locations.append(SkillLocation("project", workspace, f"{PROJECT_DIR_NAME}/skills"))
    return locations


def skill_locations(workspace: Path | None) -> list[tuple[Origin, Path]]:
    """Where skills are looked for, lowest precedence first."""
    return [(location.origin, location.path) for location in _locations(workspace)]


def _hidden(name: str) -> bool:
    return name.startswith((".", "__"))


def _extra_files(root: Path, folder: str) -> tuple[str, ...]:
    """The skill's other regular files (links and hidden entries left out), sorted."""
    found: list[str] = []
    try:
        for prefix, entries in walk_within(root, folder, descend=lambda name: not _hidden(name)):
            found += [
                prefix + e.name
                for e in entries
                if not _hidden(e.name) and e.is_file(follow_symlinks=False)
            ]
    except ReadRefused:
        return ()
    files = sorted((f for f in found if f != SKILL_FILE), key=lambda f: f.split("/"))
    return tuple(files[:MAX_LISTED_FILES])


def read_skill(root: Path, folder: str, origin: Origin) -> Skill | SkillProblem | None:
    """The skill in root/folder (its SKILL.md read without following links); None when
    the folder has no SKILL.md."""
    from co_tui.knowledge.frontmatter import parse

    directory = root / folder if folder else root
    path = directory / SKILL_FILE
    try:
        data = read_bytes_within(root, PurePosixPath(folder, SKILL_FILE), limit=MAX_SKILL_BYTES)
    except NotFound:
        return None
    except ReadRefused as exc:
        return SkillProblem(exc.path, exc.reason)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return SkillProblem(path, "not UTF-8 text")
    doc = parse(text)
    if doc.error:
        return SkillProblem(path, doc.error)
    if not doc.has_frontmatter:
        return SkillProblem(path, "no YAML frontmatter (--- name: … description: … ---)")
    name, description = doc.meta.get("name"), doc.meta.get("description")
    if not isinstance(name, str) or not NAME_PATTERN.match(name.strip()):
        return SkillProblem(
            path, f"frontmatter 'name' must be lower-case letters, digits and '-', got {name!r}"
        )
    if not isinstance(description, str) or not description.strip():
        return SkillProblem(path, "frontmatter 'description' is missing or empty")
    if len(description) > MAX_DESCRIPTION:
        return SkillProblem(path, f"'description' is longer than {MAX_DESCRIPTION} characters")
    body = doc.body.strip()
    if not body:
        return SkillProblem(path, "the instructions (the text after the frontmatter) are empty")
    description = " ".join(description.split())
    files = _extra_files(root, folder)
    return Skill(name.strip(), description, body, directory, origin, root, files)


def _candidates(location: SkillLocation, problems: list[SkillProblem]) -> list[str]:
    """The skill folders of a location, below its root; links are problems, not skills."""
    try:
        entries = list_within(location.root, location.folder)
    except NotFound:
        return []
    except ReadRefused as exc:
        problems.append(SkillProblem(exc.path, exc.reason))
        return []
    prefix = f"{location.folder}/" if location.folder else ""
    folders = []
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue
        if entry.kind == "link":
            problems.append(SkillProblem(location.path / entry.name, LINK))
        elif entry.kind == "dir":
            folders.append(prefix + entry.name)
    return folders


def discover_skills(workspace: Path | None = None) -> SkillCatalog:
    catalog = SkillCatalog()
    found: dict[str, Skill] = {}
    for location in _locations(workspace):
        for folder in _candidates(location, catalog.problems):
            result = read_skill(location.root, folder, location.origin)
            if result is None:  # a folder without a SKILL.md is not a skill
                continue
            if isinstance(result, SkillProblem):
                catalog.problems.append(result)
                continue
            if result.name in found:
                catalog.overridden.append(found[result.name])
            found[result.name] = result
    catalog.skills = dict(sorted(found.items()))
    return catalog


def skills_prompt_section(skills: Iterable[Skill]) -> str:
    """The system prompt's list of skills: names and descriptions only ('' when none)."""
    lines = [f"- {s.name}: {s.description}" for s in skills]
    if not lines:
        return ""
    return "\n".join([
        "## Skills",
        "Skills are step-by-step instructions for specific tasks. When the user's request "
        "matches one below, call `load_skill` with its name first and follow what it returns.",
        *lines,
    ])  # fmt: skip


def list_skills_display(workspace: Path | None = None) -> str:
    """Markdown for /skills: every skill with where it comes from, then any problems."""
    catalog = discover_skills(workspace)
    lines = [f"**Skills** ({len(catalog.skills)})", ""]
    if not catalog.skills:
        lines.append("No skills found.")
    for skill in catalog.skills.values():
        lines.append(f"- `{skill.name}` ({skill.origin}): {skill.description}")
    for skill in catalog.overridden:
        lines.append(f"- ~~`{skill.name}` ({skill.origin})~~ overridden")
    if catalog.problems:
        lines += ["", "**Problems**", ""]
        lines += [f"- `{p.path}`: {p.message}" for p in catalog.problems]
    lines += ["", "Add your own in " + ", ".join(
        f"`{path}`" for origin, path in skill_locations(workspace) if origin != "shipped"
    ) + " (one folder per skill, holding a SKILL.md)."]  # fmt: skip
    return "\n".join(lines)
