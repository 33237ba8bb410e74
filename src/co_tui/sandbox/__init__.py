from co_tui.sandbox.base import (
    CommandResult,
    IsolationLevel,
    NetworkAccess,
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
    "NetworkAccess",
    "OutputListener",
    "SandboxChoice",
    "SandboxError",
    "SandboxProtocol",
    "SandboxUnavailable",
    "SubprocessSandbox",
    "select_sandbox",
]
