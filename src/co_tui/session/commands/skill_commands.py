"""Skills as slash commands: `/git-commit-message staged changes` sends a turn that applies
the skill `git-commit-message` to "staged changes".

The turn's prompt carries the skill's instructions, as `load_skill` would return them, and
what was typed after the name; the transcript and the prompt history keep what was typed.
The skills are those the assistant may load (co_tui.skills.discover_skills): a project's
only once the project is trusted, so an untrusted project adds no command. A skill whose
name is a built-in or a custom command (custom.py) is not a command: the other wins, and
/skills says so. Skill names are checked again here (lower-case letters, digits and '-'):
nothing else can reach the completion list or the hint.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from co_tui.config.trust.project_files import ProjectView
from co_tui.safety.visible import visible
from co_tui.session.commands.custom import CustomCommand
from co_tui.skills import NAME_PATTERN, SKILL_FILE, Skill, discover_skills


@dataclass(frozen=True)
class SkillCommand(CustomCommand):
    """A custom command whose prompt is a skill's instructions; `template` is the body."""

    files: tuple[str, ...] = ()  # the skill's other files, for load_skill(name, file=...)

    @property
    def usage_line(self) -> str:
        return f"/{self.name} [request]"

    def expand(self, arguments: str) -> str:
        request = arguments.strip() or "(nothing more: apply it to the conversation so far)"
        parts = [
            f"Use the skill `{self.name}` for this request: {request}",
            f"The skill's instructions (from {self.origin}):",
            self.template,
        ]
        if self.files:
            listed = ", ".join(self.files)
            parts.append(f"Its other files ({listed}): read one with load_skill(name, file=...).")
        return "\n\n".join(parts)


def skill_command(skill: Skill) -> SkillCommand:
    return SkillCommand(
        name=skill.name,
        description=f"skill: {visible(skill.description, keep='')}",  # the hint shows it
        template=skill.body,
        origin=skill.path / SKILL_FILE,
        scope="skill",
        files=skill.files,
    )


def commands_for(skills: Iterable[Skill], taken: Collection[str]) -> dict[str, SkillCommand]:
    """A command for each skill whose name is free and plain."""
    return {
        skill.name: skill_command(skill)
        for skill in skills
        if skill.name not in taken and NAME_PATTERN.fullmatch(skill.name)
    }


def load(project: ProjectView | None, taken: Collection[str]) -> dict[str, SkillCommand]:
    """The commands of the skills the assistant may load here (discover_skills' trust gate)."""
    return commands_for(discover_skills(project).skills.values(), taken)
