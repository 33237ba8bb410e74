"""The sandbox seam: every shell command co-tui runs goes through a `SandboxProtocol`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

IsolationLevel = Literal["full", "namespace", "none"]


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
# git the command starts and outranks the repository's own .git/config: no fsmonitor
# daemon, hooks, pager, ssh, credential helper or gpg runs from a (possibly hostile) repo.
# diff.external is not emptied here: git 2.39 then fails every `git diff` ("cannot run
# : No such file"); whatever a repository's diff.external runs is held by the read-only
# mount and the missing network like any other command. GIT_EXTERNAL_DIFF is never set:
# bwrap clears the environment and the containers get only the variables co-tui gives.
_READ_ONLY_GIT_CONFIG = {
    "core.fsmonitor": "false",
    "core.pager": "cat",
    "core.hooksPath": "/dev/null",
    "core.sshCommand": "false",
    "core.editor": "false",
    "credential.helper": "",
    "log.showSignature": "false",
    "gpg.program": "false",
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


@runtime_checkable
class SandboxProtocol(Protocol):
    name: str
    isolation_level: IsolationLevel

    async def run_command(
        self, cmd: str, timeout: float = 120, *, read_only: bool = False
    ) -> CommandResult:
        """Run `cmd` in the workspace. `read_only`: in a read-only view of the workspace with
        no network (auto-approved commands); a backend that cannot isolate raises
        SandboxError rather than run it with less."""
        ...

    async def cleanup(self) -> None: ...

    async def switch_session(self, session_id: str) -> None:
        """The conversation is now `session_id` (/clear, /resume). A backend whose resources
        are named after the session (Docker's container) removes them; the next command
        starts them under the new id."""
        ...


class OutputCollector:
    """Keeps the first `limit` bytes of a stream and counts the rest, so a 50 MB output
    neither fills memory nor blocks the child on a full pipe."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._chunks: list[bytes] = []
        self._kept = 0
        self.dropped = 0

    def feed(self, data: bytes) -> None:
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
        text = raw.decode("utf-8", errors="replace")
        if "\x00" in text:  # NULs would corrupt terminals and JSON consumers
            text = text.replace("\x00", "\ufffd")
        if self.truncated:
            text += f"\n… {self.dropped:,} more bytes not shown"
        return text
