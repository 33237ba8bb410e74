"""Copying text: OSC 52 through the terminal, plus a local clipboard tool where one works.

OSC 52 (Textual's `App.copy_to_clipboard`) needs a terminal that allows it; GNOME Terminal
and other VTE terminals ignore it. So the text also goes to the first local tool that fits
the session: `wl-copy` under Wayland, `xclip` or `xsel` under X11, when on PATH. Which one
worked is said to the user, and so is a tool that failed (a non-zero exit, a timeout):
nothing is hidden behind "Copied".

No library: pyperclip would run these same programs and add nothing here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

TIMEOUT_S = 3.0


@dataclass(frozen=True)
class LocalTool:
    name: str
    args: tuple[str, ...]
    display_variable: str  # the tool is of use only when this is set


# In order of preference; the first that is on PATH with its display set is used.
LOCAL_TOOLS = (
    LocalTool("wl-copy", ("wl-copy",), "WAYLAND_DISPLAY"),
    LocalTool("xclip", ("xclip", "-selection", "clipboard"), "DISPLAY"),
    LocalTool("xsel", ("xsel", "--clipboard", "--input"), "DISPLAY"),
)


@dataclass(frozen=True)
class CopyOutcome:
    """What a copy did. `tool`: the local tool used (None: none fits this session);
    `failure`: why it did not work (None: it did, or none was tried)."""

    tool: str | None = None
    failure: str | None = None

    def message(self, what: str = "") -> str:
        """E.g. "Copied the last answer (xclip + OSC 52)"; `what`: what was copied."""
        copied = f"Copied {what}".rstrip()
        if self.tool is None:
            return f"{copied} via OSC 52 (your terminal must allow it)"
        if self.failure is None:
            return f"{copied} ({self.tool} + OSC 52)"
        return f"{copied} via OSC 52 only (your terminal must allow it): {self.tool} {self.failure}"

    @property
    def failed(self) -> bool:
        return self.failure is not None


def local_tool(env: Mapping[str, str] | None = None) -> LocalTool | None:
    """The local clipboard tool for this session, if one is installed and can work."""
    env = os.environ if env is None else env
    for tool in LOCAL_TOOLS:
        if env.get(tool.display_variable) and shutil.which(tool.args[0], path=env.get("PATH")):
            return tool
    return None


def copy_locally(text: str, env: Mapping[str, str] | None = None) -> CopyOutcome:
    """Give `text` to the local clipboard tool (blocking: call from a thread)."""
    tool = local_tool(env)
    if tool is None:
        return CopyOutcome()
    executable = shutil.which(tool.args[0], path=(env or os.environ).get("PATH"))
    assert executable is not None
    try:
        # The tools fork a process that keeps owning the selection: it inherits no pipe of
        # ours (DEVNULL), or waiting for their output would last as long as the selection.
        done = subprocess.run(
            [executable, *tool.args[1:]],
            input=text.encode("utf-8"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=TIMEOUT_S,
            check=False,
            env=None if env is None else dict(env),
        )
    except subprocess.TimeoutExpired:
        return CopyOutcome(tool.name, f"did not finish in {TIMEOUT_S:g} s")
    except OSError as exc:
        return CopyOutcome(tool.name, f"could not run ({exc.strerror or exc})")
    if done.returncode != 0:
        return CopyOutcome(tool.name, f"failed (exit status {done.returncode})")
    return CopyOutcome(tool.name)
