"""Ctrl+G: the prompt's text in the user's editor ($VISUAL, else $EDITOR, else `vi` when
installed), with the app suspended (Textual's `App.suspend`). There is no setting for it on
purpose: a project's settings file must not choose a program that Ctrl+G would run.

The draft goes to a private temporary file (0600, mkstemp). What the editor saved replaces
the prompt; an editor that is missing, cannot run, exits non-zero, is killed, or cannot be
suspended for leaves the draft as it was, and the user is told why. The file is deleted only
once the prompt holds the text (`Edited.discard`): if co-tui dies in between, the draft is
still there.

While the editor has the terminal, Ctrl+C and Ctrl+\\ signal its whole process group, co-tui
included: like system(3), co-tui lets them pass while it waits, so they end the editor (its
own business) and never the app. Nothing raised while the app is suspended may escape the
`with app.suspend()` block: Textual resumes the app only when the block ends normally.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from signal import _HANDLER

    from textual.app import App

FALLBACK = "vi"
NONE_SET = "no editor: set $VISUAL or $EDITOR"


# The signals a terminal sends its foreground process group from the keyboard.
KEYBOARD_SIGNALS = (signal.SIGINT, signal.SIGQUIT)


@dataclass(frozen=True)
class Edited:
    """The edited text, or None with `problem` saying why the draft stays as it was. `file`
    holds the draft until `discard()`, called once the prompt holds the text."""

    text: str | None
    problem: str = ""
    file: Path | None = None

    def discard(self) -> None:
        if self.file is not None:
            self.file.unlink(missing_ok=True)


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


def _let_pass(signum: int, frame: object) -> None:
    """A handler that does nothing (unlike SIG_IGN, exec gives the editor the default)."""


@contextmanager
def keyboard_signals_go_to_the_editor() -> Iterator[None]:
    """While inside, Ctrl+C and Ctrl+\\ at the terminal do nothing to co-tui (main thread
    only; elsewhere Python's handlers stay, as they must)."""
    previous: dict[signal.Signals, _HANDLER] = {}
    try:
        for signum in KEYBOARD_SIGNALS:
            previous[signum] = signal.signal(signum, _let_pass)
    except ValueError:  # not the main thread: signals cannot be handled here
        pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _run(argv: list[str], shown: str) -> str:
    """Run the editor on the terminal; "" when it saved and quit, else why not."""
    try:
        with keyboard_signals_go_to_the_editor():
            code = subprocess.run(argv, check=False).returncode
    except FileNotFoundError:
        return f"editor not found: {shown}"
    except OSError as exc:
        return f"cannot run the editor {shown}: {exc.strerror or exc}"
    if code < 0:
        return f"the editor {shown} was ended by {signal.Signals(-code).name}"
    if code != 0:
        return f"the editor {shown} exited with status {code}"
    return ""


def edit_in_editor(app: App[Any], text: str, command: list[str]) -> Edited:
    """Open `command` on `text` with the app suspended; what it saved, or why not. Call
    `discard()` on the result once the prompt holds its text."""
    from textual.app import SuspendNotSupported

    if not command:
        return Edited(None, NONE_SET)
    fd, name = tempfile.mkstemp(prefix="co-tui-prompt-", suffix=".md")  # 0600
    path = Path(name)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text if text.endswith("\n") or not text else text + "\n")
    shown = shlex.join(command)
    problem = ""
    try:
        with app.suspend():
            try:
                problem = _run([*command, str(path)], shown)
            except Exception as exc:  # never out of the block: Textual would not resume
                problem = f"the editor {shown} could not run: {exc}"
    except SuspendNotSupported:
        problem = "cannot hand the terminal to an editor here"
    except OSError as exc:  # the terminal could not be handed back and forth
        problem = f"the terminal could not be taken back from the editor: {exc}"
    if problem:
        return Edited(None, problem, path)
    try:
        edited = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Edited(None, f"cannot read what the editor saved: {exc}", path)
    # The file ends with a newline (as editors keep it); the prompt has none there.
    return Edited(edited.removesuffix("\n"), file=path)
