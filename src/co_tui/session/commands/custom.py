"""Custom slash commands: Markdown files whose text is a prompt.

`~/.config/co-tui/commands/review.md` (the user's) and `.co-tui/commands/review.md` (the
project's) both give `/review`. Typing `/review src/x.py` sends the file's text as a normal
turn, with `$ARGUMENTS` replaced by `src/x.py` (without the placeholder, what was typed after
the command is added at the end). An optional front matter gives the line shown in /help,
the completion hint and the palette:

    ---
    description: review a file for bugs
    ---
    Review $ARGUMENTS for bugs.

Read like any file that widens what co-tui does (a co_tui.safety.safe_read `Folder`): only inside
its folder, never through a symbolic link, never a file over `MAX_BYTES`. A project's
commands load only once the user trusts the project, from its files as read for that
decision (co_tui.config.trust.ProjectView); a user's command with the same name wins over the
project's, and a built-in command always wins over both. What is skipped, and why, comes
back as problems for the front to show once.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from co_tui.config.paths import PROJECT_DIR_NAME, user_config_dir
from co_tui.config.trust.project_files import ProjectView
from co_tui.safety.safe_read import DiskFolder, Folder, NotFound, ReadRefused

FOLDER = "commands"
SUFFIX = ".md"
MAX_BYTES = 32_000  # a prompt, not a document
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
PLACEHOLDER = "$ARGUMENTS"
Scope = Literal["user", "project", "skill"]


@dataclass(frozen=True)
class CustomCommand:
    name: str
    description: str
    template: str
    origin: Path  # the file it was read from
    scope: Scope

    @property
    def usage_line(self) -> str:
        return f"/{self.name} [arguments]" if PLACEHOLDER in self.template else f"/{self.name}"

    def expand(self, arguments: str) -> str:
        """The prompt the model gets for `/name arguments`."""
        if PLACEHOLDER in self.template:
            return self.template.replace(PLACEHOLDER, arguments)
        return f"{self.template}\n\n{arguments}" if arguments else self.template


@dataclass
class Loaded:
    commands: dict[str, CustomCommand] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # one line each, for the user


def parse(text: str) -> tuple[str, str]:
    """(description, prompt) of a command file: the front matter's `description:` if any."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        for end, line in enumerate(lines[1:], start=1):
            if line.strip() == "---":
                description = ""
                for meta in lines[1:end]:
                    key, _, value = meta.partition(":")
                    if key.strip().lower() == "description":
                        description = value.strip().strip("\"'")
                return description, "\n".join(lines[end + 1 :]).strip()
    return "", text.strip()


def _describe(prompt: str) -> str:
    first = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    return first if len(first) <= 60 else first[:59] + "…"


def read_folder(folder: Folder, relative: str, scope: Scope) -> Loaded:
    """The commands in `relative` below the folder (a missing folder has none)."""
    loaded = Loaded()
    root = folder.root
    where = f"{root / relative}"
    try:
        entries = folder.list(relative)
    except NotFound:
        return loaded
    except ReadRefused as exc:
        loaded.problems.append(f"custom commands not loaded: {exc}")
        return loaded
    for entry in entries:
        if not entry.name.endswith(SUFFIX):
            continue
        stem = entry.name.removesuffix(SUFFIX)
        if not NAME.fullmatch(stem):
            loaded.problems.append(
                f"{where}/{entry.name!r} skipped: a command name is 1-40 lower-case letters, "
                "digits, '-' or '_'"
            )
            continue
        try:
            text = folder.read_text(f"{relative}/{entry.name}", limit=MAX_BYTES)
        except ReadRefused as exc:
            loaded.problems.append(f"/{stem} skipped: {exc}")
            continue
        description, prompt = parse(text)
        if not prompt:
            loaded.problems.append(f"/{stem} skipped: {where}/{entry.name} has no prompt")
            continue
        loaded.commands[stem] = CustomCommand(
            stem, description or _describe(prompt), prompt, root / relative / entry.name, scope
        )
    return loaded


def load(
    project: ProjectView | None,
    *,
    builtins: Collection[str],
    config_dir: Path | None = None,
) -> Loaded:
    """The user's commands, then the project's (when trusted), minus any that would shadow a
    built-in; the problems say what was skipped and why."""
    user = read_folder(DiskFolder(config_dir or user_config_dir()), FOLDER, "user")
    project_folder = f"{PROJECT_DIR_NAME}/{FOLDER}"
    result = Loaded(problems=[*user.problems])
    if project is not None and project.trusted:
        from_project = read_folder(project.files, project_folder, "project")
        result.problems += from_project.problems
        for name, command in from_project.commands.items():
            if name in user.commands:
                result.problems.append(
                    f"/{name} in {project_folder}/ is not used: you have a /{name} of your own"
                )
            else:
                result.commands[name] = command
    elif project is not None and project.files.has_any(project_folder):
        result.problems.append(
            f"the commands in {project_folder}/ are not loaded: this project is not trusted "
            "(/trust to trust it)"
        )
    result.commands.update(user.commands)
    for name in sorted(set(result.commands) & set(builtins)):
        origin = result.commands.pop(name).origin
        result.problems.append(f"{origin} is not used: /{name} is a built-in command")
    result.commands = dict(sorted(result.commands.items()))
    return result
