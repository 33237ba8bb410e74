"""Ctrl+G: the prompt's text in the user's editor ($VISUAL, else $EDITOR, else `vi` when
installed), with the app suspended (Textual's `App.suspend`). There is no setting for it on
purpose: a project's settings file must not choose a program that Ctrl+G would run.

The draft goes to a private temporary file (0600, mkstemp) that is deleted afterwards. What
the editor saved replaces the prompt; an editor that is missing, cannot run, exits non-zero
or cannot be suspended for leaves the draft as it was, and the user is told why.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App

FALLBACK = "vi"
NONE_SET = "no editor: set $VISUAL or $EDITOR"


@dataclass(frozen=True)
class Edited:
    """The edited text, or None with `problem` saying why the draft stays as it was."""

    text: str | None
    problem: str = ""


def editor_command(env: Mapping[str, str] | None = None) -> list[str]:
    """The editor's command line (a variable may hold arguments: "code --wait"); [] when
    none is set and `vi` is not installed."""
    env = os.environ if env is None else env
    for value in (env.get("VISUAL", ""), env.get("EDITOR", "")):
        if value.strip():
            try:
                return shlex.split(value)
            except ValueError:  # an unbalanced quote: the whole value as the program
                return [value.strip()]
    return [FALLBACK] if shutil.which(FALLBACK) else []


def edit_in_editor(app: App[Any], text: str, command: list[str]) -> Edited:
    """Open `command` on `text` with the app suspended; what it saved, or why not."""
    from textual.app import SuspendNotSupported

    if not command:
        return Edited(None, NONE_SET)
    fd, name = tempfile.mkstemp(prefix="co-tui-prompt-", suffix=".md")  # 0600
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") or not text else text + "\n")
        shown = shlex.join(command)
        try:
            with app.suspend():
                code = subprocess.run([*command, str(path)], check=False).returncode
        except SuspendNotSupported:
            return Edited(None, "cannot hand the terminal to an editor here")
        except FileNotFoundError:
            return Edited(None, f"editor not found: {shown}")
        except OSError as exc:
            return Edited(None, f"cannot run the editor {shown}: {exc.strerror or exc}")
        if code != 0:
            return Edited(None, f"the editor {shown} exited with status {code}")
        try:
            edited = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return Edited(None, f"cannot read what the editor saved: {exc}")
        # The file ends with a newline (as editors keep it); the prompt has none there.
        return Edited(edited.removesuffix("\n"))
    finally:
        path.unlink(missing_ok=True)
