"""Skills: directories holding a SKILL.md (YAML frontmatter `name`, `description`; a body of
instructions; optional files beside it).

Found in three places, later ones overriding earlier ones by name:
1. shipped: the skill folders inside this package
2. user: user_config_dir()/skills/<skill>/SKILL.md
3. project: the project's .co-tui/skills/<skill>/SKILL.md, only in a project the user
   trusts, from its files as read for that decision (co_tui.config.trust.ProjectView)

The system prompt lists names and descriptions only (`skills_prompt_section`); the model
calls `load_skill(name)` for the body when a task needs it. A malformed SKILL.md becomes a
`SkillProblem`, never an exception.

Every skill file is read through a co_tui.safety.safe_read `Folder`: a SKILL.md or extra file is
read only from inside its location's root (the package, user_config_dir(), the project's
files as read once) and never through a symbolic link. A linked skill folder or SKILL.md is
refused and shown as a problem; linked extra files are not listed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from co_tui.config.paths import PROJECT_DIR_NAME, user_config_dir
from co_tui.config.trust.project_files import ProjectView
from co_tui.safety.safe_read import LINK, DiskFolder, Folder, NotFound, ReadRefused

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256_000
MAX_DESCRIPTION = 1024
MAX_LISTED_FILES = 50
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
SHIPPED_DIR = Path(__file__).resolve().parent

Origin = Literal["shipped", "user", "project"]
_PROJECT_SKILLS = f"{PROJECT_DIR_NAME}/skills"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    path: Path  # the skill's directory
    origin: Origin
    folder: Folder  # where its files are read from (see SkillLocation)
    files: tuple[str, ...] = ()  # other files in the directory, relative, sorted

    @property
    def relative(self) -> str:
        """The skill's directory below the folder's root."""
        return self.path.relative_to(self.folder.root).as_posix()


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
    """Skills live in `relative` below the folder's root: nothing below the root is reached
    through a link, so for the user and the project the root is the config dir or the
    project itself (a linked `skills` or `.co-tui` folder is refused too)."""

    origin: Origin
    folder: Folder
    relative: str  # below the root, "" for the root itself

    @property
    def path(self) -> Path:
        root = self.folder.root
        return root / self.relative if self.relative else root


def _locations(project: ProjectView | None) -> list[SkillLocation]:
    locations = [
        SkillLocation("shipped", DiskFolder(SHIPPED_DIR), ""),
        SkillLocation("user", DiskFolder(user_config_dir()), "skills"),
    ]
    if project is not None and project.trusted:
        locations.append(SkillLocation("project", project.files, f"{PROJECT_DIR_NAME}/skills"))
    return locations


def skill_locations(project: ProjectView | None) -> list[tuple[Origin, Path]]:
    """Where skills are looked for, lowest precedence first."""
    return [(location.origin, location.path) for location in _locations(project)]


def _hidden(name: str) -> bool:
    return name.startswith((".", "__"))


def _extra_files(folder: Folder, relative: str) -> tuple[str, ...]:
    """The skill's other regular files (links and hidden entries left out), sorted."""
    try:
        found = folder.files_below(relative, descend=lambda name: not _hidden(name))
    except ReadRefused:
        return ()
    visible = (f for f in found if f != SKILL_FILE and not _hidden(f.rsplit("/", 1)[-1]))
    files = sorted(visible, key=lambda f: f.split("/"))
    return tuple(files[:MAX_LISTED_FILES])


def read_skill(folder: Folder, relative: str, origin: Origin) -> Skill | SkillProblem | None:
    """The skill in `relative` below the folder (its SKILL.md read without following
    links); None when it has no SKILL.md."""
    from co_tui.knowledge.frontmatter import parse

    directory = folder.root / relative if relative else folder.root
    path = directory / SKILL_FILE
    try:
        data = folder.read_bytes(PurePosixPath(relative, SKILL_FILE), limit=MAX_SKILL_BYTES)
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
    files = _extra_files(folder, relative)
    return Skill(name.strip(), description, body, directory, origin, folder, files)


def _candidates(location: SkillLocation, problems: list[SkillProblem]) -> list[str]:
    """The skill folders of a location, below its root; links are problems, not skills."""
    try:
        entries = location.folder.list(location.relative)
    except NotFound:
        return []
    except ReadRefused as exc:
        problems.append(SkillProblem(exc.path, exc.reason))
        return []
    prefix = f"{location.relative}/" if location.relative else ""
    folders = []
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue
        if entry.kind == "link":
            problems.append(SkillProblem(location.path / entry.name, LINK))
        elif entry.kind == "dir":
            folders.append(prefix + entry.name)
    return folders


def discover_skills(project: ProjectView | None = None) -> SkillCatalog:
    catalog = SkillCatalog()
    found: dict[str, Skill] = {}
    for location in _locations(project):
        for relative in _candidates(location, catalog.problems):
            result = read_skill(location.folder, relative, location.origin)
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


def list_skills_display(
    project: ProjectView | None = None, command_note: Callable[[str], str] | None = None
) -> str:
    """Markdown for /skills: every skill with where it comes from (and `command_note(name)`:
    how it runs as a /command, or why not), then any problems."""
    catalog = discover_skills(project)
    lines = [f"**Skills** ({len(catalog.skills)})", ""]
    if not catalog.skills:
        lines.append("No skills found.")
    for skill in catalog.skills.values():
        note = command_note(skill.name) if command_note is not None else ""
        note = f" ({note})" if note else ""
        lines.append(f"- `{skill.name}` ({skill.origin}): {skill.description}{note}")
    for skill in catalog.overridden:
        lines.append(f"- ~~`{skill.name}` ({skill.origin})~~ overridden")
    if catalog.problems:
        lines += ["", "**Problems**", ""]
        lines += [f"- `{p.path}`: {p.message}" for p in catalog.problems]
    lines += ["", "Add your own in " + ", ".join(
        f"`{path}`" for origin, path in skill_locations(project) if origin != "shipped"
    ) + " (one folder per skill, holding a SKILL.md)."]  # fmt: skip
    if project is not None and not project.trusted and project.files.has_any(_PROJECT_SKILLS):
        lines.append(f"This project's skills ({_PROJECT_SKILLS}/) load once you trust it.")
    return "\n".join(lines)
