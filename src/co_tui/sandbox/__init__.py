from co_tui.sandbox.base import (
    CommandResult,
    IsolationLevel,
    OutputListener,
    SandboxError,
    SandboxProtocol,
    SandboxUnavailable,
)
from co_tui.sandbox.select import SandboxChoice, select_sandbox
from co_tui.sandbox.subprocess import SubprocessSandbox

__all__ = [
    "CommandResult",
    "IsolationLevel",
    "OutputListener",
    "SandboxChoice",
    "SandboxError",
    "SandboxProtocol",
    "SandboxUnavailable",
    "SubprocessSandbox",
    "select_sandbox",
]
