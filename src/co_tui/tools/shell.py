"""run_shell_command: the one tool that executes code. It always goes through the sandbox.

A command that exits non-zero, times out or is killed is a failed call (`ToolFailed`: the
result's outcome is "failed", shown as such, and sent through the provider's error channel);
the model still gets its output and the `[exit code N]` line either way.

A command that runs without asking (the read-only classifier accepted it) is killed after
AUTO_APPROVED_TIMEOUT_S at most, whatever timeout the model asked for; a command the user
approved gets the timeout asked for, up to sandbox_max_timeout.

A command has the network only when the sandbox gives every approved command one, or the
user approved exactly this call "with network" in the dialog (the turn runner's
`network_approvals`): no argument of the model's asks for it. One that failed for lack of
network (sandbox/offline.py) says so, and how the user can allow it.
While it runs, its last lines go to the turn's frontend as `ToolOutput` events
(tools/live_output.py).
"""

from __future__ import annotations

from pydantic_ai import ModelRetry, RunContext, ToolFailed

from co_tui.context.deps import CoDeps
from co_tui.sandbox import CommandResult, OutputListener, SandboxError
from co_tui.sandbox.offline import offline_failure
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
    # Auto-approved (not asked) commands run in a read-only view of the workspace; those the
    # user approved with network, with the network on. Either holds for this call id once.
    call_id = ctx.tool_call_id or ""
    approved_read_only = ctx.deps.turn.read_only_approvals.pop(call_id, None)
    approved_network = ctx.deps.turn.network_approvals.pop(call_id, None)
    if not cmd.strip():
        raise ModelRetry("The command is empty: pass the shell command line to run in `cmd`.")
    if "\x00" in cmd:
        raise ModelRetry("The command contains a NUL byte, which no shell can run: remove it.")
    if any(approved not in (None, cmd) for approved in (approved_read_only, approved_network)):
        raise ModelRetry("The command differs from the one that was approved; call again.")
    read_only = approved_read_only is not None
    network = approved_network is not None and not read_only
    effective = command_timeout(timeout, ctx.deps.sandbox_max_timeout, auto_approved=read_only)
    sandbox = ctx.deps.sandbox
    try:
        result = await sandbox.run_command(
            cmd,
            timeout=effective,
            read_only=read_only,
            network=network,
            on_output=live_output(ctx),
        )
    except SandboxError as exc:
        raise ModelRetry(f"The sandbox could not run the command: {exc}") from exc
    text = result.for_model(effective)
    offline = read_only or (not network and sandbox.network.mode == "none")
    if offline and (failure := offline_failure(cmd, result)) is not None:
        text += f"\n[{no_network_note(failure.what(), read_only=read_only)}]"
    if command_failed(result):
        raise ToolFailed(text)
    return text


def no_network_note(what: str, *, read_only: bool) -> str:
    """For the model, after a command that failed for lack of network: what was seen, and
    the ways the user has to allow it (the model cannot)."""
    if read_only:
        return (
            f"no network: this command ran without asking, read-only and offline, and {what}. "
            "Commands that run without asking never have network; run it again only if the "
            "user should approve it, and they can approve it with network for that command"
        )
    return (
        f'no network: the sandbox gives commands none (sandbox_network "none") and {what}. '
        "Only the user can allow it: by approving the command with network in the approval "
        'dialog, for that command alone, or with sandbox_network "bridge" in their own '
        "settings (Docker). Tell the user; do not try to work around it"
    )
