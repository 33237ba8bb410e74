"""The sandbox seam: every shell command co-tui runs goes through a `SandboxProtocol`.

Read-only runs (auto-approved commands) give git no configuration that names a program: the
environment (READ_ONLY_ENV) outranks the rest, and the repository's own files are covered
with /dev/null (git_config_masks). Where they cannot be (`.git` is a file or a link, its
config a link, a FIFO or a folder, a `commondir` points elsewhere), git is not given the
repository at all: it fails with "not a git repository" (READ_ONLY_GIT_GUARD, checked in the
sandbox before each command). Nothing else in the view changes.
"""

from __future__ import annotations

import codecs
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

IsolationLevel = Literal["full", "namespace", "none"]
# The network an approved command gets: none, Docker's bridge, or this machine's own.
NetworkMode = Literal["none", "bridge", "host"]


@dataclass(frozen=True)
class NetworkAccess:
    """What network a sandbox's commands reach. Commands that run without asking never
    have any; an approved one has `mode`; one the user approved "with network" in the
    dialog has what `granted` says (`run_command(..., network=True)`), "" when there is
    nothing to grant (the commands reach the network already)."""

    mode: NetworkMode
    granted: str = ""

    @property
    def grantable(self) -> bool:
        return self.mode == "none" and bool(self.granted)

    def explain(self) -> str:
        """One sentence: what an approved command reaches."""
        if self.mode == "host":
            return "every command reaches whatever this machine reaches (no sandbox)"
        if self.mode == "bridge":
            return (
                'approved commands reach the network (sandbox_network "bridge"); '
                "commands that run without asking never do"
            )
        return "commands cannot reach the network"


# Told the command's output (stdout and stderr as they come, decoded) while it runs.
OutputListener = Callable[[str], None]


@dataclass(frozen=True)
class CommandResult:
    output: str
    exit_code: int
    timed_out: bool = False
    truncated: bool = False
    killed_reason: str | None = None  # e.g. "out of memory" when the sandbox killed it

    def for_model(self, timeout: float) -> str:
        """The text the model (and the user) sees for this command."""
        text = self.output.rstrip("\n")
        notes: list[str] = []
        if self.truncated:
            notes.append("output truncated")
        if self.timed_out:
            notes.append(f"timed out after {timeout:g}s; the command and its children were killed")
        elif self.killed_reason:
            notes.append(f"killed: {self.killed_reason}")
        if self.exit_code != 0 and not self.timed_out:
            notes.append(f"exit code {self.exit_code}")
        if notes:
            text = f"{text}\n[{'; '.join(notes)}]" if text else f"[{'; '.join(notes)}]"
        return text or "(no output)"


class SandboxError(Exception):
    """The sandbox itself failed (could not start, engine gone), not the command."""


class SandboxUnavailable(SandboxError):
    """A backend cannot run commands here (engine missing, workspace owned by root…): the
    message says why and how to fix it. Raised instead of falling back to less isolation."""


# Whether the run-as user can enter and write (read, for read-only runs) the workspace mounted
# at /workspace, creating nothing: the isolating backends check it before the first command.
WORKSPACE_CHECK = {
    False: "test -w /workspace && test -x /workspace",
    True: "test -r /workspace && test -x /workspace",
}


# Git configuration for read-only runs, through the environment so that it applies to any
# git the command starts and outranks any other configuration: no fsmonitor daemon, hooks,
# pager, ssh, credential helper or gpg runs, a bare repository is used only when named
# (`--git-dir` is refused), and submodules, whose own configuration could name programs,
# are not looked into. GIT_EXTERNAL_DIFF is never set: bwrap clears the environment and the
# containers get only the variables co-tui gives.
_READ_ONLY_GIT_CONFIG = {
    "core.fsmonitor": "false",
    "core.pager": "cat",
    "core.hooksPath": "/dev/null",
    "core.sshCommand": "false",
    "core.editor": "false",
    "credential.helper": "",
    "log.showSignature": "false",
    "gpg.program": "false",
    "safe.bareRepository": "explicit",
    "diff.ignoreSubmodules": "all",
}


def _git_config_env(config: dict[str, str]) -> dict[str, str]:
    env = {"GIT_CONFIG_COUNT": str(len(config))}
    for i, (key, value) in enumerate(config.items()):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


READ_ONLY_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    **_git_config_env(_READ_ONLY_GIT_CONFIG),
}

# The repository's own configuration can name programs git runs by itself (diff.external,
# a textconv or clean filter driver, include.path to more of them); diff.external cannot
# be emptied through the environment (git 2.39 then fails every `git diff`). So the
# read-only view covers these files of the workspace's .git with /dev/null: git reads
# no repository configuration at all.
MASKED_GIT_FILES = ("config", "config.worktree")
GIT_DIR_IN_SANDBOX = "/workspace/.git"
# What git is given instead of the repository when its configuration cannot be covered
# (below): a path that can never exist, whose name git's error shows the model.
HIDDEN_GIT_DIR = "/dev/null/hidden: the read-only view cannot cover the config of this .git"


@dataclass(frozen=True)
class MaskedFile:
    """A regular file of the workspace's .git to cover, and which file it is (a file
    replaced on the host is a new one: a mount over the old one no longer covers it)."""

    name: str
    identity: tuple[int, int, int]  # device, inode, ctime in ns

    @property
    def in_sandbox(self) -> str:
        return f"{GIT_DIR_IN_SANDBOX}/{self.name}"


def git_config_masks(workspace: Path) -> tuple[MaskedFile, ...]:
    """The configuration files of `workspace`/.git to cover with /dev/null in the read-only
    view: those that are regular files in a `.git` that is a plain directory. What cannot be
    covered so (a `.git` file or link, a config that is a link or a FIFO) is left as it is:
    READ_ONLY_GIT_GUARD then hides the whole repository from git."""
    git_dir = workspace / ".git"
    try:
        if not stat.S_ISDIR(git_dir.lstat().st_mode):
            return ()
    except OSError:
        return ()
    masks: list[MaskedFile] = []
    for name in MASKED_GIT_FILES:
        try:
            st = (git_dir / name).lstat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            masks.append(MaskedFile(name, (st.st_dev, st.st_ino, st.st_ctime_ns)))
    return tuple(masks)


def _guard_script() -> str:
    """Shell run in the sandbox before a read-only command: unless git would find either no
    repository or a plain .git directory whose configuration files are all absent or
    covered by /dev/null (device 1:3), and no `commondir` sending it to another directory's
    configuration, git is given HIDDEN_GIT_DIR instead. It catches what changed between
    git_config_masks and the command (a link put in, a covered file replaced on the host)."""
    g = GIT_DIR_IN_SANDBOX
    files = " && ".join(f'co_safe "{g}/{name}"' for name in MASKED_GIT_FILES)
    return (
        'co_absent() { [ ! -e "$1" ] && [ ! -L "$1" ]; }; '
        'co_safe() { co_absent "$1" || { [ ! -L "$1" ] && [ -c "$1" ] '
        '&& [ "$(stat -c %t:%T "$1")" = 1:3 ]; }; }; '
        f"if ! co_absent {g} && ! {{ [ -d {g} ] && [ ! -L {g} ] "
        f"&& co_absent {g}/commondir && {files}; }}; "
        f"then export GIT_DIR='{HIDDEN_GIT_DIR}'; fi; "
    )


READ_ONLY_GIT_GUARD = _guard_script()


@runtime_checkable
class SandboxProtocol(Protocol):
    name: str
    isolation_level: IsolationLevel

    @property
    def network(self) -> NetworkAccess: ...

    async def run_command(
        self,
        cmd: str,
        timeout: float = 120,
        *,
        read_only: bool = False,
        network: bool = False,
        on_output: OutputListener | None = None,
    ) -> CommandResult:
        """Run `cmd` in the workspace. `read_only`: in a read-only view of the workspace with
        no network (auto-approved commands); a backend that cannot isolate raises
        SandboxError rather than run it with less. `network`: this one command reaches the
        network (`self.network.granted` says how); only the user's "with network" in the
        approval dialog asks for it. Never together with `read_only`. `on_output` is told the
        output as it comes, in the event loop's thread, all of it (the result keeps only the
        start)."""
        ...

    async def cleanup(self) -> None: ...

    async def switch_session(self, session_id: str) -> None:
        """The conversation is now `session_id` (/clear, /resume). A backend whose resources
        are named after the session (Docker's container) removes them; the next command
        starts them under the new id."""
        ...


def _no_nul(text: str) -> str:
    """NULs would corrupt terminals and JSON consumers."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


class OutputCollector:
    """Keeps the first `limit` bytes of a stream and counts the rest, so a 50 MB output
    neither fills memory nor blocks the child on a full pipe. `on_output` is told every
    chunk as text (a character split across chunks waits for its other bytes)."""

    def __init__(self, limit: int, on_output: OutputListener | None = None) -> None:
        self.limit = limit
        self._chunks: list[bytes] = []
        self._kept = 0
        self.dropped = 0
        self._on_output = on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes) -> None:
        if self._on_output is not None and (text := self._decoder.decode(data)):
            self._on_output(_no_nul(text))
        room = self.limit - self._kept
        if room > 0:
            self._chunks.append(data[:room])
            self._kept += min(room, len(data))
        self.dropped += max(0, len(data) - max(room, 0))

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def text(self) -> str:
        raw = b"".join(self._chunks)
        text = _no_nul(raw.decode("utf-8", errors="replace"))
        if self.truncated:
            text += f"\n… {self.dropped:,} more bytes not shown"
        return text
