"""Custom slash commands from Markdown files: front matter, $ARGUMENTS, the user's and a
trusted project's folders, and the files that are refused (odd names, huge, links)."""

from __future__ import annotations

from pathlib import Path

from co_tui.config.trust.project_files import ProjectView, read_project_files
from co_tui.session import commands
from co_tui.session.commands.custom import MAX_BYTES, Loaded, load, parse


def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    config, workspace = tmp_path / "config", tmp_path / "project"
    user = config / "commands"
    project = workspace / ".co-tui" / "commands"
    user.mkdir(parents=True)
    project.mkdir(parents=True)
    return config, user, project


def load_from(config: Path, project: Path, *, trusted: bool) -> Loaded:
    view = ProjectView(read_project_files(project.parent.parent), trusted=trusted)
    return load(
        view,
        builtins=commands.COMMANDS,
        config_dir=config,
    )


def test_front_matter_gives_the_description() -> None:
    assert parse("---\ndescription: 'review a file'\n---\nReview $ARGUMENTS.\n") == (
        "review a file",
        "Review $ARGUMENTS.",
    )
    assert parse("Just a prompt.") == ("", "Just a prompt.")
    assert parse("---\nnot closed\nReview") == ("", "---\nnot closed\nReview")


def test_arguments_replace_the_placeholder_or_follow_the_prompt(tmp_path: Path) -> None:
    config, user, project = folders(tmp_path)
    (user / "review.md").write_text("Review $ARGUMENTS carefully.")
    (user / "standup.md").write_text("Write my stand-up notes.")
    loaded = load_from(config, project, trusted=False)
    review, standup = loaded.commands["review"], loaded.commands["standup"]
    assert review.expand("src/x.py") == "Review src/x.py carefully."
    assert review.usage_line == "/review [arguments]"
    assert standup.expand("") == "Write my stand-up notes."
    assert standup.expand("for Monday") == "Write my stand-up notes.\n\nfor Monday"
    assert standup.description == "Write my stand-up notes."


def test_project_commands_need_trust_and_never_shadow(tmp_path: Path) -> None:
    config, user, project = folders(tmp_path)
    (project / "deploy.md").write_text("Deploy.")
    (project / "review.md").write_text("The project's review.")
    (user / "review.md").write_text("My review.")
    (user / "clear.md").write_text("Not the built-in.")
    untrusted = load_from(config, project, trusted=False)
    assert set(untrusted.commands) == {"review"}
    assert any("not trusted" in p for p in untrusted.problems)
    assert any("/clear is a built-in" in p for p in untrusted.problems)
    trusted = load_from(config, project, trusted=True)
    assert set(trusted.commands) == {"deploy", "review"}
    assert trusted.commands["review"].template == "My review."


def test_hostile_files_are_refused_and_said(tmp_path: Path) -> None:
    config, user, _ = folders(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("the contents of a private file")
    (user / "leak.md").symlink_to(secret)
    (user / "Bad Name!.md").write_text("x")
    (user / "huge.md").write_text("x" * (MAX_BYTES + 1))
    (user / "empty.md").write_text("---\ndescription: nothing\n---\n")
    (user / "ok.md").write_text("Fine.")
    loaded = load(None, builtins=commands.COMMANDS, config_dir=config)
    assert set(loaded.commands) == {"ok"}
    problems = "\n".join(loaded.problems)
    assert "/leak skipped" in problems and "symbolic link" in problems
    assert "'Bad Name!.md' skipped" in problems
    assert "/huge skipped" in problems and "too large" in problems
    assert "/empty skipped" in problems
    assert "the contents of a private file" not in problems


def test_a_linked_commands_folder_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("x")
    (config / "commands").symlink_to(elsewhere)
    loaded = load(None, builtins=commands.COMMANDS, config_dir=config)
    assert loaded.commands == {}
    assert any("symbolic link" in p for p in loaded.problems)
