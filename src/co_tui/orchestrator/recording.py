"""RecordingFrontend: records every frontend call in order; answers approvals from a script.

A scripted answer is a decision, or an ApprovalAnswer (ALWAYS_ALLOW with the rule to save,
as the dialog returns it); when the script runs out, it denies."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from co_tui.orchestrator.frontend import (
    ApprovalDecision,
    ApprovalRecord,
    ApprovalReply,
    ApprovalRequest,
    StatusInfo,
    ToolCallInfo,
    ToolResultInfo,
    UsageInfo,
)


@dataclass(frozen=True)
class Call:
    name: str
    session_id: str
    payload: Any = None


class RecordingFrontend:
    def __init__(
        self,
        decisions: Iterable[ApprovalReply] | Callable[[ApprovalRequest], ApprovalReply] = (),
    ) -> None:
        self.calls: list[Call] = []
        self.approval_requests: list[ApprovalRequest] = []
        self._decide = decisions if callable(decisions) else None
        self._script = [] if callable(decisions) else list(decisions)

    def _rec(self, name: str, session_id: str, payload: Any = None) -> None:
        self.calls.append(Call(name, session_id, payload))

    # -- queries used by tests --
    def names(self) -> list[str]:
        return [c.name for c in self.calls]

    def of(self, name: str) -> list[Any]:
        return [c.payload for c in self.calls if c.name == name]

    def text(self) -> str:
        return "".join(self.of("text_delta"))

    # -- FrontendProtocol --
    def on_turn_start(self, session_id: str, prompt: str) -> None:
        self._rec("turn_start", session_id, prompt)

    def on_thinking_start(self, session_id: str) -> None:
        self._rec("thinking_start", session_id)

    def on_thinking_delta(self, session_id: str, delta: str) -> None:
        self._rec("thinking_delta", session_id, delta)

    def on_thinking_end(self, session_id: str, text: str) -> None:
        self._rec("thinking_end", session_id, text)

    def on_text_start(self, session_id: str) -> None:
        self._rec("text_start", session_id)

    def on_text_delta(self, session_id: str, delta: str) -> None:
        self._rec("text_delta", session_id, delta)

    def on_text_end(self, session_id: str, text: str) -> None:
        self._rec("text_end", session_id, text)

    def on_tool_call(self, session_id: str, call: ToolCallInfo) -> None:
        self._rec("tool_call", session_id, call)

    def on_tool_result(self, session_id: str, result: ToolResultInfo) -> None:
        self._rec("tool_result", session_id, result)

    def on_usage(self, session_id: str, usage: UsageInfo) -> None:
        self._rec("usage", session_id, usage)

    def on_status(self, session_id: str, status: StatusInfo) -> None:
        self._rec("status", session_id, status)

    def on_error(self, session_id: str, message: str) -> None:
        self._rec("error", session_id, message)

    def on_turn_end(self, session_id: str, interrupted: bool) -> None:
        self._rec("turn_end", session_id, interrupted)

    def on_approval(self, session_id: str, record: ApprovalRecord) -> None:
        self._rec("approval", session_id, record)

    async def prompt_approval(self, session_id: str, request: ApprovalRequest) -> ApprovalReply:
        self.approval_requests.append(request)
        self._rec("prompt_approval", session_id, request)
        if self._decide is not None:
            return self._decide(request)
        if not self._script:
            return ApprovalDecision.DENY
        return self._script.pop(0)
