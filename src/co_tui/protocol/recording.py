"""RecordingFrontend: the events of a turn as a list; approvals answered from a script.

A scripted answer is a decision, or an ApprovalAnswer (ALWAYS_ALLOW with the rule to save,
as the dialog returns it); when the script runs out, it denies."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from co_tui.protocol.events import TurnEvent
from co_tui.protocol.frontend import ApprovalDecision, ApprovalReply, ApprovalRequest


class RecordingFrontend:
    def __init__(
        self,
        decisions: Iterable[ApprovalReply] | Callable[[ApprovalRequest], ApprovalReply] = (),
    ) -> None:
        self.log: list[TurnEvent | ApprovalRequest] = []  # events and requests, in order
        self.approval_requests: list[ApprovalRequest] = []
        self._decide = decisions if callable(decisions) else None
        self._script = [] if callable(decisions) else list(decisions)

    @property
    def events(self) -> list[TurnEvent]:
        return [entry for entry in self.log if not isinstance(entry, ApprovalRequest)]

    def names(self) -> list[str]:
        """The type of every event, with "prompt_approval" where the user was asked."""
        return [
            "prompt_approval" if isinstance(entry, ApprovalRequest) else entry.type
            for entry in self.log
        ]

    def of(self, kind: str | type[Any]) -> list[Any]:
        """The events of one type, by its class or its `type` name ("tool_result");
        "prompt_approval": the requests the user was asked."""
        if kind == "prompt_approval":
            return list(self.approval_requests)
        if isinstance(kind, str):
            return [event for event in self.events if event.type == kind]
        return [event for event in self.events if isinstance(event, kind)]

    def text(self) -> str:
        return "".join(event.content for event in self.of("text_delta"))

    # -- FrontendProtocol --
    def emit(self, event: TurnEvent) -> None:
        self.log.append(event)

    async def prompt_approval(self, request: ApprovalRequest) -> ApprovalReply:
        self.approval_requests.append(request)
        self.log.append(request)
        if self._decide is not None:
            return self._decide(request)
        if not self._script:
            return ApprovalDecision.DENY
        return self._script.pop(0)
