"""Skills as /commands (co_tui/session/commands/skill_commands.py): a trusted project's skill
becomes one, an untrusted one's does not, taken names stay taken, odd names and hidden
characters never reach the command list."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from co_tui.config.trust.project_files import ProjectView, read_project_files
from co_tui.session import commands
from co_tui.session.commands import skill_commands
from co_tui.skills import discover_skills
from tests.skills.test_skills import project_skills, skill_md, write_skill


def view(workspace: Path, *, trusted: bool) -> ProjectView:
    return ProjectView(read_project_files(workspace), trusted=trusted)


def test_a_projects_skills_are_commands_only_once_it_is_trusted(tmp_path: Path) -> None:
    write_skill(project_skills(tmp_path), "deploy-all", skill_md("deploy-all", "ship it"))
    untrusted = skill_commands.load(view(tmp_path, trusted=False), commands.COMMANDS)
    assert "deploy-all" not in untrusted
    trusted = skill_commands.load(view(tmp_path, trusted=True), commands.COMMANDS)
    command = trusted["deploy-all"]
    assert command.scope == "skill" and command.usage_line == "/deploy-all [request]"


def test_built_ins_and_custom_commands_keep_their_names(tmp_path: Path) -> None:
    write_skill(project_skills(tmp_path), "help", skill_md("help", "x"))
    write_skill(project_skills(tmp_path), "review", skill_md("review", "x"))
    loaded = skill_commands.load(view(tmp_path, trusted=True), {*commands.COMMANDS, "review"})
    assert "help" not in loaded and "review" not in loaded
    assert "git-commit-message" in loaded  # the shipped ones too


def test_the_prompt_carries_the_instructions_and_the_request(tmp_path: Path) -> None:
    body = "Step one. Then $ARGUMENTS stays as written."
    write_skill(project_skills(tmp_path), "steps", skill_md("steps", "x", body), {"a.md": "A"})
    command = skill_commands.load(view(tmp_path, trusted=True), ())["steps"]
    prompt = command.expand("do x")
    assert prompt.startswith("Use the skill `steps` for this request: do x")
    assert body in prompt  # the body is not a template: $ARGUMENTS is left alone
    assert "a.md" in prompt and "load_skill" in prompt
    assert "apply it to the conversation so far" in command.expand("")


def test_odd_names_and_hidden_characters_never_become_a_command() -> None:
    shipped = discover_skills(None).skills["summarize-logs"]
    evil = replace(shipped, name="evil\x1b[2J", description="fine\x1b]52;c;eA==\x07 text")
    upper = replace(shipped, name="Upper")
    plain = replace(shipped, name="plain", description=evil.description)
    made = skill_commands.commands_for([evil, upper, plain], ())
    assert set(made) == {"plain"}
    assert "\x1b" not in made["plain"].description and "\x07" not in made["plain"].description
