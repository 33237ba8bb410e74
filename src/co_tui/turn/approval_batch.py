"""ApprovalBatch: the deferred calls of one approval pause, each decided.

First every call the policy settles is settled (a deny or allow rule, the built-in
read-only auto-approval); then the user is asked about the rest, one at a time ("2 of 3"),
through the ApprovalFlow, which records every decision. The egress guard reads the
conversation so far (and the system prompt last sent): an outbound call that may follow
untrusted content, or carries private text the user did not type, always asks; no rule and
no approve-all covers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.messages import ModelMessage, ToolCallPart

from co_tui.context.deps import CoDeps
from co_tui.context.origins import typed_texts
from co_tui.context.tool_calls import tool_args
from co_tui.permissions.matching import ToolCall
from co_tui.permissions.suggest import suggest_rule
from co_tui.policy.approvals import Policy, decide_policy
from co_tui.policy.egress import EgressReview, OriginKind, context_sources, egress_review
from co_tui.policy.egress_session import SHELL, session_table
from co_tui.protocol.frontend import ApprovalRequest, NetworkOffer
from co_tui.turn.approval_flow import SHELL_COMMAND_ARG, ApprovalFlow

DUPLICATE_ID_MESSAGE = "Refused: two tool calls in one response used the same id; call again."
DUPLICATE_ID_REASON = "two calls in one response share this call id"
APPROVE_ALL_REASON = "session approve-all (yolo) is on"


class ApprovalBatch:
    """Decides one pause's deferred calls for the session of `flow.deps`; `messages`: the
    conversation so far, which the egress guard reads."""

    def __init__(self, flow: ApprovalFlow, messages: Sequence[ModelMessage]) -> None:
        self.flow = flow
        self.deps: CoDeps = flow.deps
        self.table = session_table(self.deps)
        self.mcp_tools = frozenset(
            name for name, origin in self.table.origins.items() if origin.kind is OriginKind.MCP
        )
        self.sources = context_sources(messages, self.table, self.deps.sent_instructions)
        self.typed = typed_texts(messages)
        self.results: dict[str, ToolApproved | ToolDenied] = {}

    async def decide(self, requests: DeferredToolRequests) -> DeferredToolResults:
        """Every call decided and recorded: what the policy settles first, then the user's."""
        ids = [part.tool_call_id for part in requests.approvals]
        needs_user: list[tuple[ToolCallPart, dict[str, Any]]] = []
        for part in requests.approvals:
            args = tool_args(part)
            if ids.count(part.tool_call_id) > 1:  # ambiguous: an approval could reach the other
                self._deny(part, args, DUPLICATE_ID_MESSAGE, DUPLICATE_ID_REASON)
            elif not self._without_asking(part, args, self._policy(part)):
                needs_user.append((part, args))
        for index, (part, args) in enumerate(needs_user, start=1):
            await self._ask(part, args, index, len(needs_user))
        for part in requests.calls:  # external calls: none of our tools defers this way
            self.results[part.tool_call_id] = ToolDenied("This tool cannot run here.")
        return DeferredToolResults(approvals=dict(self.results))

    # -- what the policy settles --
    def _policy(self, part: ToolCallPart) -> Policy:
        return decide_policy(
            part,
            auto_confirm=self.deps.auto_confirm,
            isolation_level=self.deps.sandbox.isolation_level,
            safe_prefixes=self.deps.shell_safe_commands,
            permissions=self.deps.permissions,
            mcp_tools=self.mcp_tools,
        )

    def _review(
        self, part: ToolCallPart, args: dict[str, Any], with_network: bool = False
    ) -> EgressReview | None:
        """What the egress guard holds against the call (`with_network`: the shell command
        run with the network on); None: nothing."""
        table = session_table(self.deps, shell_network=True) if with_network else self.table
        return egress_review(part.tool_name, args, self.sources, table, self.typed)

    def _without_asking(self, part: ToolCallPart, args: dict[str, Any], policy: Policy) -> bool:
        """Settle a call a rule or the built-in policy decides; False when it must ask."""
        if policy.denied:
            self._deny(part, args, f"This call was {policy.denied}.", policy.denied, policy.rule)
            return True
        if policy.auto is None:
            return False
        if self._review(part, args) is not None:
            return False  # no rule and no approve-all covers what the egress guard holds
        self.results[part.tool_call_id] = ToolApproved(override_args=args)
        if policy.auto.read_only:
            self.deps.turn.read_only_approvals[part.tool_call_id] = args[SHELL_COMMAND_ARG]
        self.flow.record(
            part.tool_call_id,
            part.tool_name,
            args,
            "auto",
            policy.auto.reason,
            read_only=policy.auto.read_only,
            rule=policy.rule,
        )
        return True

    def _deny(
        self, part: ToolCallPart, args: dict[str, Any], message: str, reason: str, rule: str = ""
    ) -> None:
        self.results[part.tool_call_id] = ToolDenied(message)
        self.flow.record(part.tool_call_id, part.tool_name, args, "deny", reason, rule=rule)

    # -- what the user decides --
    async def _ask(self, part: ToolCallPart, args: dict[str, Any], index: int, total: int) -> None:
        review = self._review(part, args)
        if self.deps.auto_confirm and review is None:  # "approve all" chosen earlier in this batch
            self.results[part.tool_call_id] = ToolApproved(override_args=args)
            self.flow.record(
                part.tool_call_id,
                part.tool_name,
                args,
                "approve_all",
                APPROVE_ALL_REASON,
            )
            return
        policy = self._policy(part)  # again: an earlier answer in this batch may have saved a rule
        if self._without_asking(part, args, policy):
            return
        call = ToolCall(part.tool_name, args, mcp=part.tool_name in self.mcp_tools)
        request = self._request(part, args, policy, call, review, index, total)
        answered = await self.flow.ask(request, rule_for=call)
        self.results[part.tool_call_id] = answered.result(args)

    def _request(
        self,
        part: ToolCallPart,
        args: dict[str, Any],
        policy: Policy,
        call: ToolCall,
        review: EgressReview | None,
        index: int,
        total: int,
    ) -> ApprovalRequest:
        """What the dialog shows: the egress guard's review when it holds the call, else
        the rule it may save and whether it may run a shell command with the network on."""
        no_offer = self.deps.permissions.cannot_save or review is not None
        network, held = self._network_offer(part, args)
        request = ApprovalRequest(
            session_id=self.deps.session_id,
            tool_call_id=part.tool_call_id,
            tool_name=part.tool_name,
            args=args,
            reason=policy.ask_reason,
            index=index,
            total=total,
            suggested_rule=None if no_offer else suggest_rule(call),
            mcp_tool=call.mcp,
            network_state=self.deps.sandbox.network.explain() if part.tool_name == SHELL else "",
            network=network,
        )
        if review is not None:
            return review.request(request)  # its reason, sources and highlights
        if held is not None:
            return _for_network(request, held)
        return request

    def _network_offer(
        self, part: ToolCallPart, args: dict[str, Any]
    ) -> tuple[NetworkOffer | None, EgressReview | None]:
        """Whether the dialog may approve a shell command with the network on, and the
        egress guard's review of it so: an outbound call then, as under sandbox_network
        "bridge"."""
        network = self.deps.sandbox.network
        if (
            part.tool_name != SHELL
            or not network.grantable
            or not isinstance(args.get(SHELL_COMMAND_ARG), str)
        ):
            return None, None
        review = self._review(part, args, with_network=True)
        return NetworkOffer(network.granted, review.reason if review else ""), review


def _for_network(request: ApprovalRequest, held: EgressReview) -> ApprovalRequest:
    """The request with what the egress guard holds against the command with network on:
    its sources and what it carries, shown for the dialog's "with network" alone."""
    return replace(
        request,
        sources=held.labels,
        highlights=held.highlights,
        carried=tuple(c.line() for c in held.carried),
    )
