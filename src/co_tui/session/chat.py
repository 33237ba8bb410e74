"""ChatSession: one conversation, the same for every front (the app, `-p`, serve, evals,
benchmarks). No Textual here.

It owns the agent bundle, the `CoDeps`, the history, the stored session record, the MCP
connections, the token totals and the approve-all flag (`deps.auto_confirm`). One id names
the session everywhere: `deps.session_id`, the row in sessions.db, the `co.session_id` of its
spans and the sandbox container (`co-runner-<id[:8]>`).

Start-up is in steps a front may run apart (the app draws its first frame before any of
them): `open_stored()` (--continue / --resume), `build()` (deps and agent: blocking, run it in
a thread), `start_model()` (the embedded model's server), `hold_mcp()` (connects the MCP
servers and holds them until cancelled: the stdio transports must open and close in one
task). `start()` does all four for fronts that need nothing in between.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from co_tui.context.compaction import ContextWindow
from co_tui.context.usage import UsageTotals, context_window
from co_tui.protocol import events as ev
from co_tui.protocol.frontend import FrontendProtocol, NullFrontend

if TYPE_CHECKING:  # pydantic-ai and the provider SDKs load in build(), after the first frame
    from pydantic_ai import DeferredToolRequests
    from pydantic_ai.messages import ModelMessage, TextContent

    from co_tui.agent.build import AgentBundle
    from co_tui.config.settings import Settings
    from co_tui.config.trust import ProjectView
    from co_tui.context.deps import CoDeps
    from co_tui.integrations.mcp import MCPConnection
    from co_tui.store.recorder import SessionRecorder
    from co_tui.store.records import LoadedSession
    from co_tui.store.session_store import SessionStore
    from co_tui.turn.runner import TurnResult


class SessionNotReady(RuntimeError):
    """run() before build(): the agent or the deps do not exist yet."""


class ChatSession:
    def __init__(
        self,
        settings: Settings,
        *,
        workspace: Path | None = None,
        frontend: FrontendProtocol | None = None,
        store: SessionStore | None = None,
        record: bool = True,
        bundle: AgentBundle | None = None,
        deps: CoDeps | None = None,
        agent_options: dict[str, Any] | None = None,
        headless: bool = False,
        project: ProjectView | None = None,
    ) -> None:
        """`record=False`: nothing is stored (evals, benchmarks). `bundle`/`deps`: built
        elsewhere (tests, evals); `agent_options`: extra keyword arguments for build_agent.
        `headless`: a `co-tui -p` run; its session is marked so (kept out of the lists).
        `project`: the workspace's project files as read for the trust decision (a front
        that loaded the settings passes them); without it the session reads them, trusted
        as the user decided earlier."""
        self.settings = settings
        self.project = project
        self.workspace = (workspace or (deps.workspace if deps else None) or Path.cwd()).resolve()
        self.frontend: FrontendProtocol = frontend or NullFrontend()
        self.bundle = bundle
        self.deps = deps
        self.history: list[ModelMessage] = []  # the whole transcript: it only grows
        self.window = ContextWindow()  # what the model is sent of it (compactions)
        self.loaded: LoadedSession | None = None  # what open_stored() found
        self.recorder: SessionRecorder | None = None
        self.totals = UsageTotals()  # tokens, context size and cost, from the history
        self.turn_tokens = 0
        self.last_answer = ""
        self.telemetry_off: str | None = None  # why no spans are stored, for the front to say
        self._store = store
        self._record = record
        self._headless = headless
        self._agent_options = agent_options or {}
        self._mcp_task: asyncio.Task[None] | None = None
        self._session_id = deps.session_id if deps is not None else ""

    # -- identity --
    @property
    def session_id(self) -> str:
        if not self._session_id:
            from co_tui.context.deps import new_session_id

            self._session_id = new_session_id()
        return self._session_id

    def _adopt_id(self, session_id: str) -> None:
        """The session is now `session_id`: deps (spans, tools) and the record follow."""
        self._session_id = session_id
        if self.deps is not None:
            self.deps.session_id = session_id

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            from co_tui.store.session_store import SessionStore

            self._store = SessionStore(secrets=self.settings.secret_values())
        return self._store

    @property
    def mcp(self) -> MCPConnection | None:
        """The connected MCP servers (held on the deps: /status and the egress guard read them)."""
        return self.deps.mcp if self.deps is not None else None

    @property
    def ready(self) -> bool:
        return self.bundle is not None and self.deps is not None

    @property
    def approve_all(self) -> bool:
        return bool(self.deps and self.deps.auto_confirm)

    @property
    def session_tokens(self) -> int:
        return self.totals.tokens

    def context_window(self) -> int | None:
        """The model's context window in tokens, None when unknown."""
        bundle = self.bundle
        if bundle is None:
            return self.settings.context_window
        provider = bundle.resolved.provider if bundle.resolved is not None else None
        return context_window(self.settings, provider, getattr(bundle.agent, "model", None))

    def model_label(self) -> str:
        bundle = self.bundle
        if bundle is None:
            return self.settings.model or "model"
        if bundle.resolved is not None:
            return bundle.resolved.label
        model = getattr(bundle.agent, "model", None)
        return str(getattr(model, "model_name", None) or self.settings.model or "model")

    # -- start-up --
    def open_stored(
        self, *, continue_latest: bool = False, resume: str | None = None, ask_pending: bool = True
    ) -> LoadedSession | None:
        """--continue / --resume ID, before build(): the deps take the stored session's id.
        `ask_pending=False` (a front that will not ask): calls left waiting for approval are
        answered as not run. Raises SessionError (one line). Blocking: reads SQLite."""
        from co_tui.store.recorder import open_session

        loaded = open_session(
            self.store,
            self.workspace,
            continue_latest=continue_latest,
            resume=resume,
        )
        if loaded is not None:
            self._take(loaded, ask_pending=ask_pending)
        return loaded

    def read_project(self) -> ProjectView | None:
        """The project's files, trusted as the user decided, when no front gave them (read
        once; None when the workspace ships nothing for co-tui). Blocking."""
        if self.project is None:
            from co_tui.config.trust import stored_view

            self.project = stored_view(self.workspace)
        return self.project

    def build(self) -> None:
        """The deps (sandbox chosen and checked) and the agent, then telemetry. Blocking.
        Raises SandboxUnavailable / SandboxError / ProviderError for the front to report."""
        self.read_project()
        if self.deps is None:
            from co_tui.context.deps import create_deps

            self.deps = create_deps(
                self.settings, self.workspace, session_id=self.session_id, project=self.project
            )
        else:
            self._adopt_id(self.session_id)
            if self.deps.project is None:
                self.deps.project = self.project
        self.deps.context_window = self.window
        if self.bundle is None:
            from co_tui.agent.build import build_agent

            self.bundle = build_agent(self.settings, **self._agent_options)
            from co_tui.telemetry import TelemetryUnavailable, setup_telemetry

            try:
                setup_telemetry(self.settings)
            except TelemetryUnavailable as exc:
                self.telemetry_off = str(exc)
        if self._record and self.recorder is None:
            from co_tui.store.recorder import SessionRecorder

            if self.loaded is not None:
                self.recorder = SessionRecorder.resume(
                    self.store, self.loaded, window=self.window, headless=self._headless
                )
            else:
                self.recorder = SessionRecorder(
                    self.store,
                    self.session_id,
                    cwd=self.workspace,
                    window=self.window,
                    headless=self._headless,
                )
        if self.recorder is not None:
            self.recorder.model = self.model_label()

    async def start_model(self, progress: Callable[[Any], None] | None = None) -> None:
        """Start the embedded model's server (a remote model returns at once). Raises
        LocalServerError."""
        bundle = self.built()[0]
        if bundle.resolved is None or bundle.resolved.provider != "local":
            return
        from co_tui.llm.local.provider import ensure_local_started

        await ensure_local_started(bundle.resolved.model, progress)

    async def hold_mcp(self, ready: Callable[[MCPConnection | None], None]) -> None:
        """Connect the configured MCP servers, call `ready` once they are attached (or at
        once with None when there are none), and hold them until this task is cancelled."""
        bundle, deps = self.built()
        if not self.settings.mcp_servers:
            ready(None)
            return
        from co_tui.agent.mcp import attach_mcp, connect_mcp_servers

        connection = await connect_mcp_servers(self.settings, deps.workspace)
        called = False
        try:
            attach_mcp(bundle, connection)
            deps.mcp = connection
            called = True
            ready(connection)
            await asyncio.Event().wait()
        finally:
            if not called:
                ready(None)
            await connection.aclose()

    async def start(self, progress: Callable[[Any], None] | None = None) -> None:
        """build() in a thread, the embedded model, the MCP servers (held in a task of
        their own until aclose())."""
        await asyncio.to_thread(self.build)
        await self.start_model(progress)
        connected = asyncio.get_running_loop().create_future()

        def ready(connection: MCPConnection | None) -> None:
            if not connected.done():
                connected.set_result(connection)

        self._mcp_task = asyncio.create_task(self.hold_mcp(ready))
        await asyncio.wait({self._mcp_task, connected}, return_when=asyncio.FIRST_COMPLETED)
        if self._mcp_task.done() and not self._mcp_task.cancelled():
            self._mcp_task.result()  # raise what failed

    def built(self) -> tuple[AgentBundle, CoDeps]:
        """The agent bundle and the deps; SessionNotReady before build()."""
        if self.bundle is None or self.deps is None:
            raise SessionNotReady("the session is not built yet")
        return self.bundle, self.deps

    # -- turns --
    async def run(self, prompt: str) -> TurnResult:
        """One user turn: recorded (every checkpoint saved), history and totals updated.
        The files its `@` mentions name are attached for the model
        (co_tui/context/attachments.py)."""
        if self.recorder is not None:
            self.recorder.begin_turn(prompt)
        return await self._run(await self._with_attachments(prompt))

    async def _with_attachments(self, prompt: str) -> str | list[str | TextContent]:
        """The prompt, and the files its `@` mentions name, each tagged as attached."""
        from co_tui.context.attachments import expand

        if "@" not in prompt:
            return prompt
        _, deps = self.built()
        vault = deps.obsidian_vault_path
        expanded = await asyncio.to_thread(expand, prompt, self.workspace, vault)
        for attachment in expanded.attachments:
            level: Literal["info", "warning"] = "warning" if attachment.problem else "info"
            self.frontend.emit(
                ev.Status(session_id=self.session_id, message=attachment.note, level=level)
            )
        return expanded.content()

    async def resume_pending(self, pending: DeferredToolRequests) -> TurnResult:
        """A stored session was waiting for approval: ask again, then continue the run."""
        return await self._run("", pending)

    async def _run(
        self, prompt: str | list[str | TextContent], pending: DeferredToolRequests | None = None
    ) -> TurnResult:
        from co_tui.turn.runner import run_turn

        bundle, deps = self.built()
        self.turn_tokens = 0
        result = await run_turn(
            bundle.agent,
            prompt,
            deps=deps,
            history=self.history,
            frontend=self.frontend,
            model_settings=bundle.model_settings,
            request_limit=self.settings.max_request_limit,
            http_retries=self.settings.model_http_retries,
            on_checkpoint=self._checkpoint if self.recorder is not None else None,
            journal=self.recorder,
            resume_deferred=pending,
        )
        self.history = result.messages
        if result.error and self.recorder is not None and not result.save_error:
            await self.recorder.note_error(len(result.messages), result.error)
        self.turn_tokens = result.usage.input_tokens + result.usage.output_tokens
        self.totals.count(self.history)
        if result.output:
            self.last_answer = result.output
        return result

    async def _checkpoint(
        self, messages: list[ModelMessage], pending: DeferredToolRequests | None
    ) -> None:
        recorder = self.recorder
        assert recorder is not None
        await recorder.checkpoint(messages, pending)
        self._follow_forks()

    def _follow_forks(self) -> None:
        """A save found another writer's turns: this session goes on as the fork (its id
        everywhere from now on), and the user is told."""
        recorder = self.recorder
        if recorder is None or not recorder.forks:
            return
        told = self.session_id  # the turn's events carry the id it started with
        for fork in recorder.forks:
            self.frontend.emit(ev.Status(session_id=told, message=fork.message(), level="warning"))
        recorder.forks.clear()
        self._adopt_id(recorder.session_id)

    async def save(self) -> None:
        """Store what changed outside a turn (a /compact); nothing is written otherwise."""
        if self.recorder is not None and self.history:
            await asyncio.to_thread(self.recorder.save, self.history)
            self._follow_forks()

    # -- changing the conversation --
    async def replace_history(self, history: Sequence[ModelMessage]) -> None:
        """A command rebound the history: empty (/clear) starts a new session with a new id
        and approve-all back to the settings' value; otherwise it is saved."""
        self.history = list(history)
        self.totals.count(self.history)
        if history:
            await self.save()
            return
        from co_tui.context.deps import new_session_id

        self.window.reset()
        self.last_answer = ""
        self._adopt_id(new_session_id())
        await self._move_sandbox()
        self._reset_approve_all()
        if self.recorder is not None:
            self.recorder.start_new(self.session_id)

    async def switch_to(self, loaded: LoadedSession) -> None:
        """Continue a stored session (/resume): its history, its id, approve-all reset."""
        self._take(loaded)
        await self._move_sandbox()
        self.last_answer = ""
        self._reset_approve_all()
        if self._record:
            from co_tui.store.recorder import SessionRecorder

            self.recorder = SessionRecorder.resume(
                self.store,
                loaded,
                model=self.model_label(),
                window=self.window,
                headless=self._headless,
            )

    def switch_model(self, bundle: AgentBundle, settings: Settings) -> None:
        """/model: later turns use `bundle`; the conversation and its id stay."""
        self.bundle = bundle
        self.settings = settings
        if self.recorder is not None:
            self.recorder.model = self.model_label()

    def _take(self, loaded: LoadedSession, *, ask_pending: bool = True) -> None:
        self.loaded = loaded
        pending_kept = ask_pending or loaded.pending is None
        self.history = list(loaded.messages if pending_kept else loaded.history_without_pending())
        self.totals.reset()
        self.totals.count(self.history)  # the stored responses keep their usage
        self.window.reset(loaded.compactions)
        self._adopt_id(loaded.info.id)

    async def _move_sandbox(self) -> None:
        """The sandbox's container follows the session's id (it is named after it)."""
        if self.deps is not None:
            await self.deps.sandbox.switch_session(self.session_id)

    def _reset_approve_all(self) -> None:
        if self.deps is not None:  # approve-all chosen in another session does not carry over
            self.deps.set_approve_all(self.settings.auto_confirm)

    # -- the end --
    async def aclose(self) -> None:
        """Close the MCP servers, the sandbox and the store. Safe to call twice."""
        task, self._mcp_task = self._mcp_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.deps is not None:
            with contextlib.suppress(Exception):
                await self.deps.sandbox.cleanup()
        if self._store is not None:
            self._store.close()
