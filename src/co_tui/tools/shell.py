"""run_shell_command: the one tool that executes code. It always goes through the sandbox.

A command that exits non-zero, times out or is killed is a failed call (`ToolFailed`: the
result's outcome is "failed", shown as such, and sent through the provider's error channel);
the model still gets its output and the `[exit code N]` line either way.

A command that runs without asking (the read-only classifier accepted it) is killed after
AUTO_APPROVED_TIMEOUT_S at most, whatever timeout the model asked for; a command the user
approved gets the timeout asked for, up to sandbox_max_timeout.

While it runs, its last lines go to the turn's frontend as `ToolOutput` events
(tools/live_output.py).
"""

from __future__ import annotations

from pydantic_ai import ModelRetry, RunContext, ToolFailed

from co_tui.context.deps import CoDeps
from co_tui.sandbox import CommandResult, OutputListener, SandboxError
from co_tui.tools.live_output import LiveOutput

AUTO_APPROVED_TIMEOUT_S = 30


def command_timeout(requested: int, max_timeout: int, *, auto_approved: bool) -> int:
    """The seconds a command may run: what was asked for, within the limits."""
    limit = min(max_timeout, AUTO_APPROVED_TIMEOUT_S) if auto_approved else max_timeout
    return max(1, min(requested, limit))


def command_failed(result: CommandResult) -> bool:
    return result.exit_code != 0 or result.timed_out or result.killed_reason is not None


def live_output(ctx: RunContext[CoDeps]) -> OutputListener | None:
    """The command's last lines, to the turn's frontend as they come (none outside a turn)."""
    frontend = ctx.deps.turn.frontend
    if frontend is None or not ctx.tool_call_id:
        return None
    return LiveOutput(frontend, ctx.deps.session_id, ctx.tool_call_id)


async def run_shell_command(ctx: RunContext[CoDeps], cmd: str, timeout: int = 120) -> str:
    """Run a shell command in the sandbox, in the workspace directory, and return its output.

    Args:
        cmd: The shell command line to run (POSIX sh syntax).
        timeout: Seconds before the command and its children are killed (default 120).
    """
    if not cmd.strip():
        raise ModelRetry("The command is empty: pass the shell command line to run in `cmd`.")
    if "\x00" in cmd:
        raise ModelRetry("The command contains a NUL byte, which no shell can run: remove it.")
    # Auto-approved (not asked) commands run in a read-only view of the workspace.
    approved_read_only = ctx.deps.turn.read_only_approvals.pop(ctx.tool_call_id or "", None)
    if approved_read_only is not None and approved_read_only != cmd:
        raise ModelRetry("The command differs from the one that was approved; call again.")
    read_only = approved_read_only is not None
    effective = command_timeout(timeout, ctx.deps.sandbox_max_timeout, auto_approved=read_only)
    try:
        result = await ctx.deps.sandbox.run_command(
            cmd, timeout=effective, read_only=read_only, on_output=live_output(ctx)
        )
    except SandboxError as exc:
        raise ModelRetry(f"The sandbox could not run the command: {exc}") from exc
    text = result.for_model(effective)
    if command_failed(result):
        raise ToolFailed(text)
    return text
