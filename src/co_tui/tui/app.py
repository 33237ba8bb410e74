"""CoApp: the full-screen app. Owns the session (agent bundle, deps, history, token counts);
runs each turn as an exclusive async worker that calls the orchestrator's run_turn. When a
turn, `!cmd` or /command worker ends, the chat screen sends the next queued message.

Start-up draws the first frame before anything heavy: the agent (pydantic-ai, provider SDKs)
and the sandbox are built in a worker after it. Tests inject `bundle` and `deps`. In a project
whose settings would widen what co-tui may do (co_tui.trust), that worker first asks whether
to trust it (once per settings file), before anything those settings would start.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker, WorkerState

from co_tui.config import Settings, user_data_dir
from co_tui.trust import NOT_TRUSTED, PROJECT_FILE, ProjectTrust, what_it_would_do
from co_tui.tui.idle_gc import IdleCollector
from co_tui.tui.palette import SlashCommandProvider
from co_tui.tui.screens.chat import ChatScreen
from co_tui.tui.session_control import SessionController
from co_tui.tui.widgets.prompt import PromptHistory
from co_tui.tui.widgets.transcript import Note, RenderedItem, ToolCallBlock

if TYPE_CHECKING:
    from co_tui.agent import AgentBundle
    from co_tui.deps import CoDeps
    from co_tui.sessions import SessionStore
    from co_tui.tui.frontend import TuiFrontend

# Set to a file path: the app writes the time of its first frame there and exits (bench/p3).
FIRST_FRAME_ENV = "CO_TUI_EXIT_AFTER_FIRST_FRAME"
_DEFAULT = object()
BUSY_GROUPS = ("turn", "command", "session")  # workers a queued message waits for


def css_paths() -> list[Path]:
    """styles/*.tcss: inside the installed package (wheel), else at the repository root."""
    here = Path(__file__).resolve()
    for candidate in (here.parent.parent / "styles", here.parents[3] / "styles"):
        if candidate.is_dir():
            return sorted(candidate.glob("*.tcss"))
    return []


class CoApp(App[None]):
    TITLE = "co-tui"
    CSS_PATH = css_paths()  # type: ignore[assignment]
    COMMANDS = App.COMMANDS | {SlashCommandProvider}
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f2", "spans", "Spans", show=False),
    ]

    def __init__(
        self,
        settings: Settings,
        *,
        bundle: AgentBundle | None = None,
        deps: CoDeps | None = None,
        history_path: Path | object | None = _DEFAULT,
        session_store: SessionStore | None = None,
        continue_latest: bool = False,
        resume: str | None = None,
        project: ProjectTrust | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.project = project  # settings from the working directory that would widen
        self.bundle = bundle
        self.deps = deps
        self.history: list[Any] = []  # list[ModelMessage]: the session's conversation
        self.session_tokens = 0
        self.turn_tokens = 0
        self.last_answer = ""
        self.frontend: TuiFrontend | None = None
        self.load_error: str | None = None
        self._loaded = asyncio.Event()
        self._turn_worker: Worker[None] | None = None
        path = user_data_dir() / "history" if history_path is _DEFAULT else history_path
        self.prompt_history = PromptHistory(path if isinstance(path, Path) else None)
        self.chat = ChatScreen(self.prompt_history, show_thinking=settings.verbose)
        self.idle_gc = IdleCollector(self)
        # --continue / --resume [ID]; every turn is saved (tui/session_control.py).
        self.sessions = SessionController(
            self, session_store, continue_latest=continue_latest, resume=resume
        )

    # -- start-up --
    def on_unmount(self) -> None:
        self.idle_gc.uninstall()

    def get_default_screen(self) -> ChatScreen:
        return self.chat

    def on_mount(self) -> None:
        self.idle_gc.install()
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        self.refresh_status()
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        target = os.environ.get(FIRST_FRAME_ENV)
        if target:  # a file to write the wall-clock time of the first frame to
            Path(target).write_text(f"first-frame {time.time():.6f}\n")
            self.exit()
            return
        self._load()

    @work(group="startup", exit_on_error=False)
    async def _load(self) -> None:
        try:
            await self._settle_trust()
            if self.deps is None:
                from co_tui.deps import create_deps

                self.deps = await asyncio.to_thread(create_deps, self.settings)
            if self.bundle is None:
                from co_tui.agent import build_agent

                self.bundle = await asyncio.to_thread(build_agent, self.settings)
                from co_tui.telemetry import setup_telemetry

                await asyncio.to_thread(setup_telemetry, self.settings)  # off: no db file
            if warning := self.deps.sandbox_warning:
                self.chat.transcript.add(Note(warning, "warning"))
            from co_tui.tui.frontend import TuiFrontend

            self.frontend = TuiFrontend(self, self.chat)
            await self.sessions.start()
            if self.bundle.resolved is not None:
                await self._start_local_model(self.bundle.resolved.model)
            if self.settings.mcp_servers:
                mcp_ready = asyncio.Event()
                self._run_mcp(mcp_ready)
                await mcp_ready.wait()
        except Exception as exc:  # a provider or sandbox that cannot be used: say so
            from co_tui.sandbox import SandboxError

            self.load_error = str(exc)
            sandbox = isinstance(exc, SandboxError)
            what = "the sandbox cannot start" if sandbox else "cannot start the model"
            self.chat.transcript.add(Note(f"{what}: {exc}", "error"))
        finally:
            self._loaded.set()
            self.refresh_status()

    async def _settle_trust(self) -> None:
        """Ask about a project the user has not decided on for this settings file (the
        answer is stored); trusted, its settings apply in full, else without what they would
        enable (nothing of theirs starts)."""
        project = self.project
        if project is None:
            return
        if project.decision == "undecided":
            from co_tui.tui.screens.trust import TrustScreen

            trusted = await self.push_screen_wait(TrustScreen(project))
            project = self.project = project.decide("trusted" if trusted else "declined")
            try:
                project.remember()
            except OSError as exc:
                self.chat.transcript.add(Note(f"cannot store the decision: {exc}", "warning"))
            if project.trusted:
                self.settings = project.trusted_settings
                self.chat.transcript.add(Note(f"trusted: {PROJECT_FILE} applies in full"))
        if not project.trusted:
            self.chat.transcript.add(
                Note(
                    f"{NOT_TRUSTED}: {PROJECT_FILE} {what_it_would_do(project)}; ignored "
                    "(start co-tui with --trust-project to trust it)",
                    "warning",
                )
            )
        self.refresh_status()

    async def _start_local_model(self, model: Any) -> None:
        """The embedded model's server loads before the first turn, with progress shown in
        the status bar; a model that is not local returns at once."""
        from co_tui.llm.local import ensure_local_started

        def progress(update: Any) -> None:
            if update.done:
                self.chat.status_bar.set(note="")
                self.chat.transcript.add(Note(update.message))
            else:
                self.chat.status_bar.set(note=f"{update.message} {update.elapsed_s:.1f}s")

        await ensure_local_started(model, progress)

    @work(group="mcp", exit_on_error=False)
    async def _run_mcp(self, ready: asyncio.Event) -> None:
        """Connect the configured MCP servers and hold them for the session. The connection
        is opened and closed in this one task (the stdio transports require it); the worker
        is cancelled when the app exits."""
        from co_tui.mcp import (
            MCP_CONNECTION_KEY,
            attach_mcp,
            connect_mcp_servers,
            failure_note,
            mcp_status_summary,
        )

        assert self.bundle is not None and self.deps is not None
        connection = await connect_mcp_servers(self.settings, self.deps.workspace)
        try:
            attach_mcp(self.bundle, connection)
            self.deps.extra[MCP_CONNECTION_KEY] = connection
            for failure in connection.failures:
                level = "warning" if failure.tool is not None else "error"
                self.chat.transcript.add(Note(failure_note(failure), level))
            self.chat.status_bar.set(mcp=mcp_status_summary(connection))
            ready.set()
            await asyncio.Event().wait()
        finally:
            ready.set()
            await connection.aclose()

    async def wait_ready(self) -> bool:
        await self._loaded.wait()
        return self.bundle is not None and self.deps is not None and self.frontend is not None

    @property
    def session_id(self) -> str:
        return self.deps.session_id if self.deps is not None else ""

    # -- status --
    def model_label(self) -> str:
        if self.bundle is None:
            return "loading model…" if self.load_error is None else "no model"
        if self.bundle.resolved is not None:
            return self.bundle.resolved.label
        model = getattr(self.bundle.agent, "model", None)
        return str(getattr(model, "model_name", None) or self.settings.model or "model")

    def refresh_status(self) -> None:
        deps = self.deps
        untrusted = self.project is not None and not self.project.trusted
        warnings = [NOT_TRUSTED if untrusted else "", (deps.sandbox_warning or "") if deps else ""]
        self.chat.status_bar.set(
            model=self.model_label(),
            sandbox=deps.sandbox.name if deps else "…",
            isolation=deps.sandbox.isolation_level if deps else "…",
            yolo=bool(deps and deps.auto_confirm),
            warning="; ".join(w for w in warnings if w),
            turn_tokens=self.turn_tokens,
            session_tokens=self.session_tokens,
        )

    def update_usage(self, input_tokens: int, output_tokens: int, requests: int) -> None:
        self.turn_tokens = input_tokens + output_tokens
        session = self.session_tokens + self.turn_tokens
        self.chat.sidebar.set_usage(input_tokens, output_tokens, session, requests)
        self.chat.status_bar.set(turn_tokens=self.turn_tokens, session_tokens=session)

    # -- turns --
    @property
    def turn_running(self) -> bool:
        return self._turn_worker is not None and not self._turn_worker.is_finished

    @property
    def busy(self) -> bool:
        """A turn, `!cmd`, /command or session switch runs: what the user sends now waits."""
        return any(w.group in BUSY_GROUPS and not w.is_finished for w in self.workers)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        finished = event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)
        if finished and event.worker.group in BUSY_GROUPS:
            self.chat.send_next_queued()

    def start_turn(self, prompt: str) -> None:
        self._turn_worker = self._run_turn(prompt)

    def cancel_turn(self) -> None:
        """Stop the running turn. What was queued behind it is not sent: it comes back into
        the prompt, since the user who stops a turn may no longer want what followed."""
        from co_tui.tui.screens.approval import ApprovalScreen

        if isinstance(self.screen, ApprovalScreen):
            self.screen.dismiss(None)
        if self._turn_worker is not None:
            self._turn_worker.cancel()
        self.chat.prompt.take_back_all()

    def action_cancel_turn(self) -> None:
        self.cancel_turn()

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def _run_turn(self, prompt: str, pending: Any = None) -> None:
        self.chat.set_busy(True)
        self.turn_tokens = 0
        self.idle_gc.busy()
        try:
            await self._turn_body(prompt, pending)
        finally:
            self.idle_gc.idle_soon()

    def resume_pending(self, pending: Any) -> None:
        """A reopened session was waiting for approval: ask again, then continue the run."""
        self._turn_worker = self._run_turn("", pending)

    async def _turn_body(self, prompt: str, pending: Any = None) -> None:
        try:
            if not await self.wait_ready():
                self.chat.transcript.add(Note(f"cannot run a turn: {self.load_error}", "error"))
                return
            assert self.bundle is not None and self.deps is not None
            from co_tui.orchestrator import run_turn

            if pending is None:
                self.sessions.begin_turn(prompt)
            result = await run_turn(
                self.bundle.agent,
                prompt,
                deps=self.deps,
                history=self.history,
                frontend=self.frontend,  # type: ignore[arg-type]
                model_settings=self.bundle.model_settings,
                request_limit=self.settings.max_request_limit,
                http_retries=self.settings.model_http_retries,
                on_checkpoint=self.sessions.checkpoint,
                resume_deferred=pending,
            )
            self.history = result.messages
            self.turn_tokens = result.usage.input_tokens + result.usage.output_tokens
            self.session_tokens += self.turn_tokens
            if result.output:
                self.last_answer = result.output
        except asyncio.CancelledError:
            self.chat.transcript.add(Note("interrupted", "warning"))
        except Exception as exc:  # a bug in a turn must leave the app usable
            self.chat.transcript.add(Note(f"the turn failed: {type(exc).__name__}: {exc}", "error"))
        finally:
            self.chat.set_busy(False)
            self.chat.status_bar.set(note="")
            self.refresh_status()

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def _run_bang(self, cmd: str) -> None:
        self.chat.set_busy(True)
        block = ToolCallBlock("bang", "!", cmd)
        self.chat.transcript.add(block)
        started = time.monotonic()
        try:
            if not await self.wait_ready() and self.deps is None:
                block.set_result("failed", f"no sandbox: {self.load_error}", None, None)
                return
            assert self.deps is not None
            timeout = self.deps.sandbox_max_timeout
            result = await self.deps.sandbox.run_command(cmd, timeout=timeout)
            status = "ok" if result.exit_code == 0 and not result.timed_out else "failed"
            duration = time.monotonic() - started
            block.set_result(status, result.for_model(timeout), None, duration)
        except asyncio.CancelledError:
            block.set_result("interrupted", "", None, None)
        except Exception as exc:
            block.set_result("failed", f"{type(exc).__name__}: {exc}", None, None)
        finally:
            self.chat.set_busy(False)

    def run_bang(self, cmd: str) -> None:
        if not cmd:
            self.chat.transcript.add(Note("usage: !<shell command>", "info"))
            return
        self._turn_worker = self._run_bang(cmd)

    # -- slash commands --
    def run_command(self, text: str) -> None:
        self._run_command(text)

    @work(group="command", exit_on_error=False)
    async def _run_command(self, text: str) -> None:
        from co_tui import commands

        if not await self.wait_ready() and (self.deps is None or self.bundle is None):
            self.chat.transcript.add(Note(f"not available: {self.load_error}", "error"))
            return
        assert self.deps is not None and self.bundle is not None
        ctx = commands.CommandContext(
            message_history=self.history,
            deps=self.deps,
            bundle=self.bundle,
            settings=self.settings,
            show=self.show_output,
            replace_bundle=self._replace_bundle,
            session_tokens=self.session_tokens,
            last_answer=self.last_answer,
            copy_to_clipboard=self._copy,
            extra={"open_spans": self.open_spans, "resume_session": self.sessions.open},
        )
        try:
            outcome = await commands.dispatch(ctx, text)
        except Exception as exc:
            self.chat.transcript.add(Note(f"{text}: {type(exc).__name__}: {exc}", "error"))
            return
        if not outcome.known:
            self.chat.transcript.add(Note(outcome.hint or "unknown command", "warning"))
            return
        if outcome.history is not None:
            self.history = outcome.history
            await self.sessions.history_replaced(outcome.history)
            if not outcome.history:
                self.chat.transcript.clear_all()
                self.chat.sidebar.new_turn()
                self.last_answer = ""
        self.refresh_status()

    # -- span viewer (F2, /spans) --
    def action_spans(self) -> None:
        self.open_spans()

    def open_spans(self, span_filter: str = "") -> None:
        from co_tui.tui.screens.spans import SpanScreen

        if not isinstance(self.screen, SpanScreen):
            self.push_screen(SpanScreen(initial_filter=span_filter))

    def show_output(self, content: object) -> None:
        from co_tui.tui.markdown import TranscriptMarkdown

        renderable = TranscriptMarkdown(content) if isinstance(content, str) else content
        self.chat.transcript.add(RenderedItem(renderable, "command-output"))  # type: ignore[arg-type]
        self.chat.transcript.scroll_end(animate=False)

    def _replace_bundle(self, bundle: AgentBundle, settings: Settings) -> None:
        self.bundle = bundle
        self.settings = settings
        self.refresh_status()

    # -- clipboard --
    def _copy(self, text: str) -> None:
        self.copy_to_clipboard(text)

    def copy_last_answer(self) -> None:
        if not self.last_answer:
            self.notify("Nothing to copy yet.", timeout=2)
            return
        self.copy_to_clipboard(self.last_answer)
        self.notify("Copied the last answer.", timeout=2)
