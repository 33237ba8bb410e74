"""Skills: directories holding a SKILL.md (YAML frontmatter `name`, `description`; a body of
instructions; optional files beside it).

Found in three places, later ones overriding earlier ones by name:
1. shipped: the skill folders inside this package
2. user: user_config_dir()/skills/<skill>/SKILL.md
3. project: <workspace>/.co-tui/skills/<skill>/SKILL.md

The system prompt lists names and descriptions only (`skills_prompt_section`); the model
calls `load_skill(name)` for the body when a task needs it. A malformed SKILL.md becomes a
`SkillProblem`, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from co_tui.config import PROJECT_DIR_NAME, user_config_dir

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
    files: tuple[str, ...] = ()  # other files in the directory, relative, sorted


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


def skill_locations(workspace: Path | None) -> list[tuple[Origin, Path]]:
    """Where skills are looked for, lowest precedence first."""
    locations: list[tuple[Origin, Path]] = [
        ("shipped", SHIPPED_DIR),
        ("user", user_config_dir() / "skills"),
    ]
    if workspace is not None:
        locations.append(("project", workspace / PROJECT_DIR_NAME / "skills"))
    return locations


def _extra_files(folder: Path) -> tuple[str, ...]:
    files: list[str] = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith((".", "__")) for part in rel.parts) or not path.is_file():
            continue
        if rel.as_posix() == SKILL_FILE:
            continue
        files.append(rel.as_posix())
        if len(files) >= MAX_LISTED_FILES:
            break
    return tuple(files)


def read_skill(folder: Path, origin: Origin) -> Skill | SkillProblem:
    from co_tui.knowledge.frontmatter import parse

    path = folder / SKILL_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        return SkillProblem(path, f"cannot read ({exc.strerror or type(exc).__name__})")
    if len(data) > MAX_SKILL_BYTES:
        return SkillProblem(path, f"larger than {MAX_SKILL_BYTES:,} bytes")
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
    return Skill(name.strip(), " ".join(description.split()), body, folder, origin,
                 _extra_files(folder))  # fmt: skip


def discover_skills(workspace: Path | None = None) -> SkillCatalog:
    catalog = SkillCatalog()
    found: dict[str, Skill] = {}
    for origin, root in skill_locations(workspace):
        if not root.is_dir():
            continue
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            if folder.name.startswith((".", "_")) or not (folder / SKILL_FILE).is_file():
                continue
            result = read_skill(folder, origin)
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
