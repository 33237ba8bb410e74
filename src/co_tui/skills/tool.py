"""load_skill (read-only tool) and the skills list in the instructions."""

from __future__ import annotations

import asyncio
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic_ai import ModelRetry, RunContext, ToolReturn

from co_tui.context.deps import CoDeps
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.safety.safe_read import ReadRefused
from co_tui.skills import MAX_SKILL_BYTES, Skill, discover_skills, skills_prompt_section
from co_tui.tools.tool_return import tool_return

if TYPE_CHECKING:
    from pydantic_ai import Agent

SOURCE = "skills"


def _read_file(skill: Skill, file: str) -> str:
    """One of the skill's listed files, read without following links out of its root."""
    if file not in skill.files:
        listed = ", ".join(skill.files) or "none"
        raise ModelRetry(f"'{file}' is not a file of skill '{skill.name}' (files: {listed}).")
    relative = PurePosixPath(skill.relative, file)
    try:
        return skill.folder.read_text(
            relative, limit=MAX_SKILL_BYTES, truncate=True, errors="replace"
        )
    except ReadRefused as exc:
        raise ModelRetry(f"Cannot read '{file}' of skill '{skill.name}': {exc.reason}.") from None


async def load_skill(ctx: RunContext[CoDeps], name: str, file: str | None = None) -> ToolReturn:
    """Load a skill's full instructions before doing the task it covers (skills are listed
    in the system prompt). Follow the instructions it returns.

    Args:
        name: The skill's name, as listed.
        file: Optional: one of the skill's extra `files` to read instead of its instructions.
    """
    catalog = await asyncio.to_thread(discover_skills, ctx.deps.project)
    skill = catalog.get(name)
    if skill is None:
        known = ", ".join(catalog.skills) or "none"
        raise ModelRetry(f"There is no skill named '{name}'. Available skills: {known}.")
    if file:
        text = await asyncio.to_thread(_read_file, skill, file)
        read = ToolDisplay(f"Read `{file}` of skill `{skill.name}`.")
        return tool_return(read, skill=skill.name, file=file, content=text)
    fields: dict[str, Any] = {
        "skill": skill.name,
        "instructions": skill.body,
        "directory": str(skill.path),
    }
    if skill.files:
        fields["files"] = list(skill.files)
        fields["files_note"] = "Read one with load_skill(name, file=...)."
    return tool_return(ToolDisplay(f"Loaded skill `{skill.name}` ({skill.origin})."), **fields)


async def skills_instructions(ctx: RunContext[CoDeps]) -> str | None:
    catalog = await asyncio.to_thread(discover_skills, ctx.deps.project)
    return skills_prompt_section(catalog.skills.values()) or None


def register_skills(
    agent: Agent[CoDeps, Any], *, all_approval: bool = False, list_in_prompt: bool = True
) -> None:
    """Register load_skill (its source label: SOURCE), and the skills list as dynamic
    instructions when `list_in_prompt`."""
    agent.tool(requires_approval=all_approval)(load_skill)
    if list_in_prompt:
        agent.instructions(skills_instructions)
