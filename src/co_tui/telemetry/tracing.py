"""co-tui's own spans: turns, slash commands, approvals, sandbox commands, egress.

Each helper does nothing (and imports nothing) unless telemetry is active, so the modules
that use them stay cheap to import. Spans open as the current span, so they nest: a sandbox
command run by a tool sits under pydantic-ai's `execute_tool` span, and everything of one
turn (agent runs, approvals) under the `turn` span.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from co_tui.telemetry.setup import active_telemetry

if TYPE_CHECKING:
    from opentelemetry.util.types import AnyValue

    from co_tui.sandbox.base import CommandResult, NetworkAccess, OutputListener, SandboxProtocol

P = ParamSpec("P")
R = TypeVar("R")


def _error_status(message: str) -> Any:
    from opentelemetry.trace import Status, StatusCode

    return Status(StatusCode.ERROR, message)


class TurnSpan:
    """The `turn` span's closing figures, set once the turn has its result."""

    def __init__(self, span: Any = None) -> None:
        self._span = span

    def finished(
        self,
        *,
        input_tokens: int,
        output_tokens: int,
        requests: int,
        interrupted: bool,
        error: str | None,
    ) -> None:
        if self._span is None:
            return
        self._span.set_attributes(
            {
                "gen_ai.usage.input_tokens": input_tokens,
                "gen_ai.usage.output_tokens": output_tokens,
                "co.turn.requests": requests,
                "co.turn.interrupted": interrupted,
            }
        )
        if error:
            self._span.set_status(_error_status(error))


@contextlib.contextmanager
def turn_span(session_id: str, prompt: object) -> Iterator[TurnSpan]:
    """One `turn` span around every hop and approval of a turn (turn/runner.py)."""
    telemetry = active_telemetry()
    if telemetry is None:
        yield TurnSpan()
        return
    attributes: dict[str, AnyValue] = {
        "co.session_id": session_id,
        "co.turn.prompt_chars": len(str(prompt)),
    }
    with telemetry.tracer.start_as_current_span("turn", attributes=attributes) as span:
        yield TurnSpan(span)


class CommandSpan:
    """A slash command's span: whether the command was known, once dispatch knows."""

    def __init__(self, span: Any = None) -> None:
        self._span = span

    def finished(self, *, known: bool) -> None:
        if self._span is not None:
            self._span.set_attribute("co.command.known", known)


@contextlib.contextmanager
def command_span(text: str) -> Iterator[CommandSpan]:
    """One `slash_command /<name>` span around a slash command's dispatch."""
    telemetry = active_telemetry()
    if telemetry is None:
        yield CommandSpan()
        return
    name = text.strip().removeprefix("/").partition(" ")[0].lower()
    attributes = {"co.command.name": name, "co.command.text": text}
    with telemetry.tracer.start_as_current_span(
        f"slash_command /{name}", attributes=attributes
    ) as span:
        yield CommandSpan(span)


def approval_clock() -> int:
    """When the decision started (ns): the approval span's duration is the time it took."""
    return time.time_ns()


def trace_approval(record: Any, started_ns: int | None = None) -> None:
    """One span per approval decision (an orchestrator ApprovalRecord), under the turn."""
    telemetry = active_telemetry()
    if telemetry is None:
        return
    span = telemetry.tracer.start_span(
        f"approval {record.tool_name}",
        start_time=started_ns or time.time_ns(),
        attributes={
            "gen_ai.tool.name": record.tool_name,
            "gen_ai.tool.call.id": record.tool_call_id,
            "co.approval.decision": record.decision,
            "co.approval.reason": record.reason,
            "co.approval.args_sha256": record.args_hash,
        },
    )
    span.end()


EGRESS_SPAN_PREFIX = "egress "  # "egress web_fetch": one span per call that left this machine


class EgressSpan:
    """What one outbound call sent, added to as it goes (a redirect is one more request)."""

    def __init__(self, span: Any = None) -> None:
        self._span = span
        self._destinations: list[str] = []
        self._bytes = 0

    def sent(self, destination: str, size: int) -> None:
        if self._span is None:
            return
        if destination and destination not in self._destinations:
            self._destinations.append(destination)
        self._bytes += size
        self._span.set_attributes(
            {"co.egress.destinations": list(self._destinations), "co.egress.bytes": self._bytes}
        )

    def outcome(self, outcome: str) -> None:
        """How it ended: sent (the default), refused (nothing was sent) or failed."""
        if self._span is not None:
            self._span.set_attribute("co.egress.outcome", outcome)


@contextlib.contextmanager
def traced_egress(
    tool: str, destination: str, size: int, sources: Callable[[], Sequence[str]]
) -> Iterator[EgressSpan]:
    """One `egress <tool>` span around a call that sends data off this machine: where to
    (`destination`, a host or a service), how many bytes of content (`size`, the request the
    assistant chose: a URL, a query, a message, a draft, tool arguments), and the labels of
    the private or untrusted sources in the conversation (`sources`, called only when
    telemetry is on). Redaction applies to it like to every span."""
    telemetry = active_telemetry()
    if telemetry is None:
        yield EgressSpan()
        return
    attributes = {
        "co.egress.tool": tool,
        "co.egress.destination": destination,
        "co.egress.sources": list(sources()),
        "co.egress.outcome": "sent",
    }
    with telemetry.tracer.start_as_current_span(
        f"{EGRESS_SPAN_PREFIX}{tool}", attributes=attributes
    ) as span:
        egress = EgressSpan(span)
        egress.sent(destination, size)
        yield egress


class TracingSandbox:
    """Wraps any SandboxProtocol: a span per command; everything else passes through."""

    def __init__(self, inner: SandboxProtocol) -> None:
        object.__setattr__(self, "_inner", inner)

    @property
    def inner(self) -> SandboxProtocol:
        return self._inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._inner, name, value)

    def __repr__(self) -> str:
        return f"TracingSandbox({self._inner!r})"

    @property
    def network(self) -> NetworkAccess:
        return self._inner.network

    async def run_command(
        self,
        cmd: str,
        timeout: float = 120,
        *,
        read_only: bool = False,
        network: bool = False,
        on_output: OutputListener | None = None,
    ) -> CommandResult:
        telemetry = active_telemetry()
        if telemetry is None:
            return await self._inner.run_command(
                cmd, timeout=timeout, read_only=read_only, network=network, on_output=on_output
            )
        attributes: dict[str, AnyValue] = {
            "co.sandbox.name": str(self._inner.name),
            "co.sandbox.isolation": str(self._inner.isolation_level),
            "co.sandbox.command": cmd,
            "co.sandbox.timeout_s": float(timeout),
            "co.sandbox.read_only": read_only,
            "co.sandbox.network": network,
        }
        with telemetry.tracer.start_as_current_span(
            "sandbox_command", attributes=attributes
        ) as span:
            result = await self._inner.run_command(
                cmd, timeout=timeout, read_only=read_only, network=network, on_output=on_output
            )
            span.set_attributes(
                {
                    "co.sandbox.exit_code": result.exit_code,
                    "co.sandbox.timed_out": result.timed_out,
                    "co.sandbox.truncated": result.truncated,
                    "co.sandbox.output_chars": len(result.output),
                }
            )
            if result.timed_out or result.killed_reason:
                span.set_status(_error_status(result.killed_reason or "timed out"))
            return result

    async def cleanup(self) -> None:
        await self._inner.cleanup()

    async def switch_session(self, session_id: str) -> None:
        await self._inner.switch_session(session_id)


def traced_sandbox(sandbox: SandboxProtocol) -> SandboxProtocol:
    if isinstance(sandbox, TracingSandbox):
        return sandbox
    return TracingSandbox(sandbox)
