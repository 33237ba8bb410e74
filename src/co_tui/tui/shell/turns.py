"""The turns: a prompt answered, a stored run waiting for approval resumed, a `!cmd` run in
the sandbox, each in the app's one exclusive "turn" worker; cancelling it (Ctrl+C, a stop
signal). A turn that fails leaves the app usable and says why in the transcript."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from co_tui.tui.terminal.notify import AttentionNeeded

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from pydantic_ai import DeferredToolRequests
    from textual.worker import Worker

    from co_tui.tui.shell.app_base import AppBase

TURN_GROUP = "turn"


def bang_no_network(what: str) -> str:
    """After a `!cmd` that failed for lack of network: what was seen, and the ways to allow it."""
    return (
        f'no network: the sandbox gives commands none (sandbox_network "none") and {what}. '
        "To let one command reach it, ask the assistant to run it and approve it with "
        'network (w) in the dialog; sandbox_network "bridge" in your settings gives '
        "Docker's session container one"
    )


class Turns:
    def __init__(self, app: AppBase) -> None:
        self.app = app
        self._worker: Worker[None] | None = None

    @property
    def running(self) -> bool:
        return self._worker is not None and not self._worker.is_finished

    def start(self, prompt: str) -> None:
        self._run(self._turn(prompt, None), "turn")

    def resume_pending(self, pending: DeferredToolRequests) -> None:
        """A reopened session was waiting for approval: ask again, then continue the run."""
        self._run(self._turn("", pending), "turn")

    def run_bang(self, cmd: str) -> None:
        self._run(self._bang(cmd), "bang")

    def _run(self, work: Coroutine[Any, Any, None], name: str) -> None:
        self._worker = self.app.run_worker(
            work, name=name, group=TURN_GROUP, exclusive=True, exit_on_error=False
        )

    def cancel(self) -> None:
        """Stop the running turn. What was queued behind it is not sent: it comes back into
        the prompt, since the user who stops a turn may no longer want what followed."""
        from co_tui.tui.screens.approval import ApprovalScreen

        if isinstance(self.app.screen, ApprovalScreen):
            self.app.screen.dismiss(None)
        if self._worker is not None:
            self._worker.cancel()
        self.app.chat.prompt.take_back_all()

    async def cancel_and_wait(self) -> None:
        """Cancel the turn as Ctrl+C does and wait until it is saved and its commands gone."""
        from textual.worker import WorkerError

        worker = self._worker
        self.cancel()
        if worker is not None:
            with contextlib.suppress(WorkerError):
                await worker.wait()

    async def stop_quietly(self) -> None:
        """Cancel the running turn without taking back the queue (the session is going)."""
        if self.running:
            assert self._worker is not None
            self._worker.cancel()
            with contextlib.suppress(Exception):
                await self._worker.wait()

    async def _turn(self, prompt: str, pending: DeferredToolRequests | None) -> None:
        app = self.app
        app.idle_gc.busy()
        try:
            await self._turn_body(prompt, pending)
        finally:
            app.idle_gc.turn_over()

    async def _turn_body(self, prompt: str, pending: DeferredToolRequests | None) -> None:
        app = self.app
        started = time.monotonic()
        ended = "the answer is ready"
        try:
            if not await app.wait_ready():
                ended = "the turn could not start"
                if app.session.deps is not None:  # the model could not start: said once, at start
                    app.notice("No model to answer: choose one with /model.", "error")
                else:
                    app.notice(f"cannot run a turn: {app.load_error}", "error")
                return
            if pending is None:
                await app.session.run(prompt)
            else:
                await app.session.resume_pending(pending)
        except asyncio.CancelledError:
            ended = "the turn was interrupted"
            app.notice("interrupted", "warning")
        except Exception as exc:  # a bug in a turn must leave the app usable
            ended = "the turn failed"
            app.notice(f"the turn failed: {type(exc).__name__}: {exc}", "error")
        finally:
            app.chat.status = replace(app.chat.status, note="")
            app.refresh_status()
            elapsed = time.monotonic() - started
            if app.made_session is not None and elapsed >= app.settings.notify_after_s:
                app.post_message(AttentionNeeded(f"{ended} (after {elapsed:.0f} s)"))

    async def _bang(self, cmd: str) -> None:
        """`!cmd`: a command in the sandbox, outside any turn, shown as a tool call. One that
        failed for lack of network says so, and how to allow it."""
        from co_tui.protocol import events as ev
        from co_tui.sandbox.offline import offline_failure
        from co_tui.tools.live_output import LiveOutput

        app = self.app
        session = await app.wait_session()  # a `!cmd` typed ahead of the first frame
        call = ev.ToolCall(
            session_id=session.session_id,
            tool_call_id="bang",
            tool_name="!",
            args={"cmd": cmd},
            key_arg=cmd,
        )
        app.frontend.emit(call)

        def result(status: ev.ToolStatus, content: str, duration: float | None = None) -> None:
            app.frontend.emit(
                ev.ToolResult(
                    session_id=call.session_id,
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    status=status,
                    content=content,
                    duration_s=duration,
                )
            )

        started = time.monotonic()
        try:
            deps = session.deps
            if not await app.wait_ready() and deps is None:
                result("failed", f"no sandbox: {app.load_error}")
                return
            assert session.deps is not None
            timeout = session.deps.sandbox_max_timeout
            sandbox = session.deps.sandbox
            live = LiveOutput(app.frontend, call.session_id, call.tool_call_id)
            outcome = await sandbox.run_command(cmd, timeout=timeout, on_output=live)
            ok = outcome.exit_code == 0 and not outcome.timed_out
            duration = time.monotonic() - started
            text = outcome.for_model(timeout)
            if sandbox.network.mode == "none" and (failed := offline_failure(cmd, outcome)):
                text += f"\n[{bang_no_network(failed.what())}]"
            result("ok" if ok else "failed", text, duration)
        except asyncio.CancelledError:
            result("interrupted", "")
        except Exception as exc:
            result("failed", f"{type(exc).__name__}: {exc}")
