"""HeadlessFrontend: `co-tui -p "..."` for scripts and pipes.

text: the answer streams to stdout; tool calls, denials and errors go to stderr.
stream-json: one JSON object a line for every frontend event (session_id included).
json: one object at the end with the text, usage, tool calls and denials.
Approvals are denied unless `--yes` was given; every denial is reported. Permission rules
apply as in the app (a deny rule denies even with `--yes`); "always allow" is never offered.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from typing import Any, Literal, TextIO

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
from co_tui.visible import visible

OutputFormat = Literal["text", "json", "stream-json"]


class HeadlessFrontend:
    def __init__(
        self,
        output_format: OutputFormat = "text",
        approve_all: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
        verbose: bool = False,
    ) -> None:
        self.output_format = output_format
        self.approve_all = approve_all
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.verbose = verbose
        self.text_parts: list[str] = []
        self.tool_calls: dict[str, dict[str, Any]] = {}
        self.denials: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.usage: UsageInfo | None = None
        self._ended_with_newline = True
        self.main_session: str | None = None  # the first turn's; others are sub-agents

    # -- output helpers --
    def _event(self, kind: str, session_id: str, **fields: Any) -> None:
        if self.output_format == "stream-json":
            record = {"type": kind, "session_id": session_id, "ts": round(time.time(), 3), **fields}
            self.out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            self.out.flush()

    def _note(self, line: str) -> None:
        """One line (or block) on stderr, its hidden characters made visible: tool output,
        names, reasons and errors can carry escape sequences meant for the terminal."""
        if self.output_format == "text":
            if not self._ended_with_newline:
                self.out.write("\n")
                self.out.flush()
                self._ended_with_newline = True
            self.err.write(visible(line, keep="\n\t") + "\n")
            self.err.flush()

    def _write_text(self, text: str) -> None:
        if self.output_format == "text" and text:
            self.out.write(text)
            self.out.flush()
            self._ended_with_newline = text.endswith("\n")

    # -- FrontendProtocol --
    def on_turn_start(self, session_id: str, prompt: str) -> None:
        self.main_session = self.main_session or session_id
        self._event("turn_start", session_id, prompt=prompt)

    def _sub(self, session_id: str) -> bool:
        return self.main_session is not None and session_id != self.main_session

    def on_thinking_start(self, session_id: str) -> None:
        self._event("thinking_start", session_id)

    def on_thinking_delta(self, session_id: str, delta: str) -> None:
        self._event("thinking_delta", session_id, content=delta)
        if self.verbose and self.output_format == "text":
            self.err.write(delta)

    def on_thinking_end(self, session_id: str, text: str) -> None:
        self._event("thinking_end", session_id, content=text)
        if self.verbose and self.output_format == "text":
            self.err.write("\n")

    def on_text_start(self, session_id: str) -> None:
        self._event("text_start", session_id)

    def on_text_delta(self, session_id: str, delta: str) -> None:
        self._event("text_delta", session_id, content=delta)
        if self._sub(session_id):  # a sub-agent's text goes to its parent, not to stdout
            return
        self.text_parts.append(delta)
        self._write_text(delta)

    def on_text_end(self, session_id: str, text: str) -> None:
        self._event("text_end", session_id, content=text)
        if self._sub(session_id):
            return
        if self.output_format == "text" and not self._ended_with_newline:
            self._write_text("\n")

    def on_tool_call(self, session_id: str, call: ToolCallInfo) -> None:
        self.tool_calls[call.tool_call_id] = {
            "id": call.tool_call_id,
            "name": call.tool_name,
            "args": call.args,
            "status": "running",
        }
        self._event("tool_call", session_id, **asdict(call))
        self._note(f"→ {call.tool_name}: {visible(call.key_arg)}")  # its tabs shown too

    def on_tool_result(self, session_id: str, result: ToolResultInfo) -> None:
        entry = self.tool_calls.setdefault(
            result.tool_call_id, {"id": result.tool_call_id, "name": result.tool_name}
        )
        entry.update(status=result.status, result=result.display or result.content)
        self._event("tool_result", session_id, **asdict(result))
        if result.status != "denied":
            body = result.display or result.content
            self._note(f"← {result.tool_name} [{result.status}]\n{body}")

    def on_usage(self, session_id: str, usage: UsageInfo) -> None:
        if not self._sub(session_id):
            self.usage = usage
        self._event("usage", session_id, **asdict(usage))

    def on_status(self, session_id: str, status: StatusInfo) -> None:
        self._event("status", session_id, message=status.message, level=status.level)
        self._note(f"… {status.message}")

    def on_error(self, session_id: str, message: str) -> None:
        self.errors.append(message)
        self._event("error", session_id, message=message)
        self._note(f"error: {message}")

    def on_turn_end(self, session_id: str, interrupted: bool) -> None:
        self._event("turn_end", session_id, interrupted=interrupted)

    async def prompt_approval(self, session_id: str, request: ApprovalRequest) -> ApprovalReply:
        return ApprovalDecision.APPROVE if self.approve_all else ApprovalDecision.DENY

    def on_approval(self, session_id: str, record: ApprovalRecord) -> None:
        """One line for every decision, automatic ones included."""
        self._event(
            "approval",
            session_id,
            tool_call_id=record.tool_call_id,
            tool_name=record.tool_name,
            args=record.args,
            reason=record.reason,
            decision=record.decision,
            read_only=record.read_only,
            rule=record.rule,
            args_sha256=record.args_hash,
        )
        call = f"{record.tool_name}({json.dumps(record.args, ensure_ascii=True)})"
        if record.decision == "deny":
            denial = {"id": record.tool_call_id, "name": record.tool_name, "args": record.args}
            self.denials.append({**denial, "reason": record.reason})
            asked = not self.approve_all and not record.rule  # a deny rule is not overridden
            hint = " — pass --yes to approve side effects" if asked else ""
            self._note(f"denied {call}: {record.reason}{hint}")
        elif record.decision == "auto":
            where = " (read-only workspace, no network)" if record.read_only else ""
            self._note(f"auto-approved {call}{where}: {record.reason}")
        else:
            self._note(f"approved {call} (--yes)")

    # -- the json summary --
    def summary(
        self,
        session_id: str,
        *,
        output: str | None,
        interrupted: bool,
        error: str | None,
        model: str,
    ) -> dict[str, Any]:
        return {
            "session_id": session_id,
            "model": model,
            "text": output if output is not None else "".join(self.text_parts),
            "usage": asdict(self.usage) if self.usage else None,
            "tool_calls": list(self.tool_calls.values()),
            "denials": self.denials,
            "interrupted": interrupted,
            "error": error,
        }
