"""ApprovalFlow: one call's approval, asked and recorded the same way wherever it is asked.

The turn runner asks through it about the deferred calls of a pause (turn/approval_batch.py);
a sub-agent's egress guard about an outbound call it holds (turn/subagents.py). For one call
the flow asks the frontend, settles what the answer decides (never more than the dialog
offered), switches approve-all on when it was chosen (a sub-agent's deps pass that on to the
parent session: `SubagentDeps.set_approve_all`), and records the decision: an
`ApprovalRecord` with the arguments and their hash, the reason, the rule, a denial's words,
kept in `records` (the runner journals them before the calls run), traced as an approval span
timed from the ask, and emitted (the decision line in the transcript, or on stderr). The
decisions no one is asked about (a rule's, the built-in policy's) are recorded the same way.

What differs between the two askers, in one place:
- the turn runner asks only what no rule, approve-all or built-in policy settles; it offers
  "always allow" (`rule_for`: the call the saved rule must match) and, for a shell command,
  "with network" (`ApprovalRequest.network`).
- a sub-agent's egress ask is asked even under approve-all (no egress ask is ever covered by
  it), right where the call is made (a sub-agent's run cannot pause); it offers neither:
  "always allow" approves that call once and saves no rule; its record is not journaled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import ToolApproved, ToolDenied

from co_tui.context.deps import CoDeps
from co_tui.permissions.matching import ToolCall
from co_tui.permissions.rules import RuleError
from co_tui.permissions.store import StoreError
from co_tui.permissions.suggest import check_rule_for
from co_tui.protocol import events as ev
from co_tui.protocol.frontend import (
    ApprovalAnswer,
    ApprovalDecision,
    ApprovalKind,
    ApprovalRecord,
    ApprovalRequest,
    FrontendProtocol,
    args_hash,
    as_answer,
    denied_message,
    feedback_words,
)
from co_tui.telemetry.tracing import approval_clock, trace_approval

SHELL_COMMAND_ARG = "cmd"  # run_shell_command's command: what a "with network" approval holds


@dataclass(frozen=True)
class Answered:
    """The user's answer to one ask, as it is recorded: the decision (never more than the
    request offered), why, the rule saved ("always allow"), and a denial's words as kept."""

    decision: ApprovalKind
    reason: str
    rule: str = ""
    feedback: str = ""

    @property
    def denied(self) -> bool:
        return self.decision == "deny"

    def result(self, args: dict[str, Any]) -> ToolApproved | ToolDenied:
        """What the run gets: the denial the model reads (with the user's words), or the
        approval of exactly the arguments the user saw."""
        if self.denied:
            return ToolDenied(denied_message(self.feedback))
        return ToolApproved(override_args=args)


class ApprovalFlow:
    """Asks about one call at a time for the session of `deps`, and records every decision
    (the user's or an automatic one) in `records`, as a span, and as an event."""

    def __init__(
        self,
        deps: CoDeps,
        frontend: FrontendProtocol,
        records: list[ApprovalRecord] | None = None,
    ) -> None:
        self.deps = deps
        self.frontend = frontend
        self.records: list[ApprovalRecord] = [] if records is None else records

    async def ask(self, request: ApprovalRequest, *, rule_for: ToolCall | None = None) -> Answered:
        """Ask the frontend about `request`, and record the answer as decided (`_settle`);
        `rule_for`: the call an "always allow" rule is saved for (None: that answer approves
        this call once)."""
        started = approval_clock()
        answer = as_answer(await self.frontend.prompt_approval(request))
        answered = self._settle(request, answer, rule_for)
        self.record(
            request.tool_call_id,
            request.tool_name,
            request.args,
            answered.decision,
            answered.reason,
            started=started,
            rule=answered.rule,
            feedback=answered.feedback,
        )
        return answered

    def _settle(
        self, request: ApprovalRequest, answer: ApprovalAnswer, rule_for: ToolCall | None
    ) -> Answered:
        """What the answer decides: "always allow" saves its rule or approves once; "with
        network" holds only when the request offered it (the turn then runs that command
        with the network on); approve-all is switched on for the session."""
        decision, reason, rule = answer.decision, request.reason, ""
        if decision is ApprovalDecision.ALWAYS_ALLOW:
            text = answer.rule or request.suggested_rule or ""
            rule = self._save_rule(text, rule_for) if rule_for is not None else ""
            if rule:
                reason = f"saved the permission rule `{rule}` for this project"
            else:
                decision = ApprovalDecision.APPROVE
        if decision is ApprovalDecision.APPROVE_WITH_NETWORK:
            if request.network is None:  # not offered: never more than was shown
                decision = ApprovalDecision.APPROVE
            else:
                command = request.args[SHELL_COMMAND_ARG]
                self.deps.turn.network_approvals[request.tool_call_id] = command
                reason = f"with network for this command: {request.network.granted}"
                if request.network.egress_reason:
                    reason = f"{reason}; {request.network.egress_reason}"
        if decision is ApprovalDecision.APPROVE_ALL:
            self.deps.set_approve_all(True)
        feedback = feedback_words(answer.feedback) if decision is ApprovalDecision.DENY else ""
        return Answered(decision.value, reason, rule=rule, feedback=feedback)

    def record(
        self,
        tool_call_id: str,
        tool_name: str,
        args: dict[str, Any],
        decision: ApprovalKind,
        reason: str,
        *,
        read_only: bool = False,
        started: int | None = None,
        rule: str = "",
        feedback: str = "",
    ) -> ApprovalRecord:
        """Keep, trace and emit one decision; `started`: when asking began (None: now)."""
        entry = ApprovalRecord(
            session_id=self.deps.session_id,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            args=args,
            args_hash=args_hash(args),
            decision=decision,
            reason=reason,
            read_only=read_only,
            rule=rule,
            feedback=feedback,
        )
        self.records.append(entry)
        trace_approval(entry, started)
        self.frontend.emit(entry)
        return entry

    def _save_rule(self, text: str, call: ToolCall) -> str:
        """Save the rule the user chose to always allow; "" (and a warning) when it cannot be."""
        try:
            check_rule_for(text, call)
            return self.deps.permissions.save(text).rule.text
        except (RuleError, StoreError) as exc:
            warning = f"the rule {text!r} was not saved ({exc}); the call is approved once"
            self.frontend.emit(
                ev.Status(session_id=self.deps.session_id, message=warning, level="warning")
            )
            return ""
