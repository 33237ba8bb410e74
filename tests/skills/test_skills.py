"""Skills: discovery in three places with overrides, malformed files reported, the prompt
listing names and descriptions only, and load_skill through real turns."""

from __future__ import annotations

from pathlib import Path

from co_tui.config.paths import user_config_dir
from co_tui.config.settings import Settings
from co_tui.config.trust.project_files import ProjectView, read_project_files
from co_tui.protocol.recording import RecordingFrontend
from co_tui.skills import (
    SHIPPED_DIR,
    discover_skills,
    list_skills_display,
    skills_prompt_section,
)
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, tool_returns


def write_skill(root: Path, folder: str, text: str, files: dict[str, str] | None = None) -> Path:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text, encoding="utf-8")
    for name, content in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(content, encoding="utf-8")
    return path


def skill_md(name: str, description: str, body: str = "Do the thing.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def user_skills() -> Path:
    return user_config_dir() / "skills"


def project_skills(workspace: Path) -> Path:
    return workspace / ".co-tui" / "skills"


def trusted(workspace: Path) -> ProjectView:
    return ProjectView(read_project_files(workspace), trusted=True)


def test_shipped_skills_are_valid() -> None:
    catalog = discover_skills(None)
    assert catalog.problems == []
    assert {"git-commit-message", "summarize-logs"} <= set(catalog.skills)
    commit = catalog.skills["git-commit-message"]
    assert commit.origin == "shipped" and commit.path.parent == SHIPPED_DIR
    assert commit.files == ("examples.md",)
    assert "imperative mood" in commit.body and not commit.body.startswith("---")


def test_later_locations_override_earlier_ones(tmp_path: Path) -> None:
    write_skill(
        user_skills(),
        "git-commit-message",
        skill_md("git-commit-message", "User's own commit style"),
    )
    write_skill(user_skills(), "standup", skill_md("standup", "User standup notes"))
    write_skill(project_skills(tmp_path), "standup-notes",
                skill_md("standup", "Project standup format", "Project body."))  # fmt: skip
    catalog = discover_skills(trusted(tmp_path))
    assert catalog.skills["git-commit-message"].origin == "user"
    assert catalog.skills["git-commit-message"].description == "User's own commit style"
    standup = catalog.skills["standup"]
    assert (standup.origin, standup.body) == ("project", "Project body.")
    assert [(s.name, s.origin) for s in catalog.overridden] == [
        ("git-commit-message", "shipped"), ("standup", "user")
    ]  # fmt: skip
    assert list(catalog.skills) == sorted(catalog.skills)
    # Without a workspace, or in a project not trusted, project skills are not looked for.
    assert discover_skills(None).skills["standup"].origin == "user"
    untrusted = ProjectView(read_project_files(tmp_path), trusted=False)
    assert discover_skills(untrusted).skills["standup"].origin == "user"


def test_malformed_skills_are_reported_not_raised(tmp_path: Path) -> None:
    root = project_skills(tmp_path)
    write_skill(root, "no-frontmatter", "Just text.\n")
    write_skill(root, "bad-yaml", "---\nname: [unclosed\n---\nbody\n")
    write_skill(root, "bad-name", skill_md("Bad Name!", "desc"))
    write_skill(root, "no-description", "---\nname: fine\n---\nbody\n")
    write_skill(root, "empty-body", skill_md("empty", "desc", ""))
    write_skill(root, "unclosed", "---\nname: x\ndescription: y\n")
    (root / "binary").mkdir()
    (root / "binary" / "SKILL.md").write_bytes(b"\xff\xfe\x00bad")
    (root / "not-a-skill").mkdir()  # no SKILL.md: ignored silently
    write_skill(root, "good", skill_md("good", "A good one"))
    catalog = discover_skills(trusted(tmp_path))
    assert "good" in catalog.skills
    problems = {p.path.parent.name: p.message for p in catalog.problems}
    assert set(problems) == {"no-frontmatter", "bad-yaml", "bad-name", "no-description",
                             "empty-body", "unclosed", "binary"}  # fmt: skip
    assert problems["no-frontmatter"].startswith("no YAML frontmatter")
    assert problems["bad-yaml"].startswith("invalid YAML frontmatter")
    assert "got 'Bad Name!'" in problems["bad-name"]
    assert "'description' is missing" in problems["no-description"]
    assert "are empty" in problems["empty-body"]
    assert problems["binary"] == "not UTF-8 text"
    display = list_skills_display(trusted(tmp_path))
    assert "- `good` (project): A good one" in display
    assert "**Problems**" in display and "bad-yaml/SKILL.md" in display


def test_prompt_section_lists_names_and_descriptions_only(tmp_path: Path) -> None:
    write_skill(project_skills(tmp_path), "secret-body",
                skill_md("secret-body", "Has a long body", "BODY-MARKER " * 50))  # fmt: skip
    catalog = discover_skills(trusted(tmp_path))
    section = skills_prompt_section(catalog.skills.values())
    assert section.startswith("## Skills\n")
    assert "- secret-body: Has a long body" in section
    assert "- summarize-logs: " in section
    assert "BODY-MARKER" not in section
    assert skills_prompt_section([]) == ""


async def test_load_skill_in_a_turn(tmp_path: Path) -> None:
    write_skill(project_skills(tmp_path), "release",
                skill_md("release", "Cut a release", "1. Bump the version.\n2. Tag it."),
                {"checklist.md": "- [ ] changelog", "scripts/bump.sh": "echo bump",
                 ".hidden": "x"})  # fmt: skip
    model = ScriptedModel(
        [Call("load_skill", {"name": "release"}, "c1")],
        [Call("load_skill", {"name": "release", "file": "scripts/bump.sh"}, "c2")],
        [Call("load_skill", {"name": "release", "file": "../../../etc/passwd"}, "c3")],
        [Call("load_skill", {"name": "nope"}, "c4")],
        ["done"],
    )
    bundle = make_bundle(model.model)
    deps = make_deps(tmp_path, Settings(), project=trusted(tmp_path))
    frontend = RecordingFrontend()
    result = await run_turn(bundle.agent, "release it", deps=deps, history=[], frontend=frontend)
    assert result.ok and result.output == "done"
    assert frontend.approval_requests == []  # read-only

    first_request = model.seen[0][-1]
    assert "- release: Cut a release" in (first_request.instructions or "")
    assert "Bump the version" not in (first_request.instructions or "")

    returns = {p.tool_call_id: p for p in tool_returns(result.messages)}
    loaded = returns["c1"].content
    assert loaded["instructions"] == "1. Bump the version.\n2. Tag it."
    assert loaded["files"] == ["checklist.md", "scripts/bump.sh"]
    assert loaded["display"] == "Loaded skill `release` (project)."
    assert returns["c2"].content["content"] == "echo bump"
    # Wrong calls go back to the model as retries, with what it can use instead.
    assert returns["c3"].outcome == "retried"
    assert "is not a file of skill 'release'" in str(returns["c3"].content)
    assert returns["c4"].outcome == "retried"
    assert "There is no skill named 'nope'" in str(returns["c4"].content)
    assert "git-commit-message" in str(returns["c4"].content)


async def test_explicit_instructions_leave_out_the_skills_list(tmp_path: Path) -> None:
    from co_tui.agent.build import build_agent

    model = ScriptedModel(["hi"])
    bundle = build_agent(Settings(), model=model.model, instructions="Only this.")
    assert bundle.tool_specs["load_skill"].source == "skills"
    deps = make_deps(tmp_path, Settings())
    await run_turn(bundle.agent, "x", deps=deps, history=[], frontend=RecordingFrontend())
    assert model.seen[0][-1].instructions == "Only this."


async def test_slash_skills(tmp_path: Path) -> None:
    from co_tui.session.commands.dispatch import dispatch
    from co_tui.session.commands.registry import CommandContext

    write_skill(project_skills(tmp_path), "mine", skill_md("mine", "Project skill"))
    write_skill(project_skills(tmp_path), "broken", "no frontmatter")
    shown: list[object] = []
    deps = make_deps(tmp_path, Settings(), project=trusted(tmp_path))
    bundle = make_bundle(ScriptedModel().model)
    ctx = CommandContext([], deps, bundle, Settings(), shown.append)
    assert (await dispatch(ctx, "/skills")).known
    [text] = shown
    assert isinstance(text, str)
    assert "- `mine` (project): Project skill" in text
    assert "- `summarize-logs` (shipped)" in text
    assert "broken/SKILL.md" in text
