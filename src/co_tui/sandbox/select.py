"""Pick the sandbox backend: the configured one, or under "auto" the first that works."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from co_tui.sandbox.base import SandboxProtocol
from co_tui.sandbox.subprocess import SubprocessSandbox


@dataclass
class SandboxChoice:
    sandbox: SandboxProtocol
    reason: str
    skipped: dict[str, str] = field(default_factory=dict)  # backend -> why it was not used


def select_sandbox(
    backend: str,
    workspace: Path,
    *,
    session_id: str,
    output_limit: int = 100_000,
    **_options: object,
) -> SandboxChoice:
    """Only the subprocess backend exists so far; docker and bwrap come with their issue."""
    skipped: dict[str, str] = {}
    if backend in ("auto", "docker"):
        skipped["docker"] = "not built into this version"
    if backend in ("auto", "bwrap"):
        skipped["bwrap"] = "not built into this version"
    reason = "configured" if backend == "subprocess" else "fallback: no isolating backend"
    return SandboxChoice(SubprocessSandbox(workspace, output_limit), reason, skipped)
