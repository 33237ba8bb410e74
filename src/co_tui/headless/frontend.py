"""HeadlessFrontend: `co-tui -p "..."` for scripts and pipes.

text: stdout holds the final answer only, written once the turn has it (a request that fails
and is retried may have streamed words that are not part of it); tool calls, denials, status
and errors go to stderr.
stream-json: every event of the turn as one JSON object a line (protocol/events.py),
`attempt_discarded` included; a running tool's `tool_output` at most ~10 a second per call,
its last lines always before its result (output_throttle.py).
json: one object at the end with the text, usage, tool calls and denials.
Nothing from the model or a tool reaches the terminal as a control sequence: text has its
hidden characters made visible (the answer and thinking as they are with `raw`), JSON has
them as `\\uXXXX` escapes. Escaped to a pipe too: a saved answer is `cat` later.
Approvals are denied unless `--yes` was given; every denial is reported. Permission rules
apply as in the app (a deny rule denies even with `--yes`); "always allow" is never offered.
An outbound call the egress guard holds (untrusted content in the conversation, or private
text in its arguments) is denied even with `--yes`, unless `--allow-private-data-out` too.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any, Literal, TextIO

from co_tui.headless.output_throttle import ToolOutputThrottle
from co_tui.protocol import events as ev
from co_tui.protocol.frontend import ApprovalDecision, ApprovalReply, ApprovalRequest
from co_tui.safety.visible import visible

WAITING_EVERY_S = 10

OutputFormat = Literal["text", "json", "stream-json"]


class HeadlessFrontend:
    def __init__(
        self,
        output_format: OutputFormat = "text",
        approve_all: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
        verbose: bool = False,
        raw: bool = False,
        allow_private_data_out: bool = False,
    ) -> None:
        self.output_format = output_format
        self.approve_all = approve_all
        self.allow_private_data_out = allow_private_data_out
        self._held: set[str] = set()  # call ids the egress guard held and --yes did not cover
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.verbose = verbose
        self.raw = raw
        self.tool_calls: dict[str, dict[str, Any]] = {}
        self.denials: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.usage: ev.Usage | None = None
        self._waiting_said = 0  # seconds of provider silence last reported on stderr
        self._subagents: set[str] = set()  # sessions whose TurnStart named a parent
        self._stream = ToolOutputThrottle(self._write_json)  # stream-json's events

    # -- output helpers --
    def flush(self) -> None:
        """What the stream holds back (a tool's latest lines) out now."""
        self._stream.flush()

    def _write_json(self, event: ev.TurnEvent) -> None:
        _write(self.out, ev.event_json(event) + "\n")

    def _note(self, line: str) -> None:
        """One line (or block) on stderr, its hidden characters made visible: tool output,
        names, reasons and errors can carry escape sequences meant for the terminal."""
        if self.output_format == "text":
            _write(self.err, visible(line, keep="\n\t") + "\n")

    def _model_text(self, text: str) -> str:
        """The answer or thinking as it goes out in text mode: as it is only with `raw`."""
        return text if self.raw else visible(text, keep="\n\t")

    def _answer(self, text: str) -> None:
        if self.output_format == "text" and text:
            text = self._model_text(text)
            _write(self.out, text if text.endswith("\n") else text + "\n")

    # -- FrontendProtocol --
    def emit(self, event: ev.TurnEvent) -> None:
        if self.output_format == "stream-json":
            self._stream.emit(event)
        main = event.session_id not in self._subagents
        match event:
            case ev.TurnStart(parent_session_id=parent) if parent is not None:
                self._subagents.add(event.session_id)
            case ev.ThinkingDelta(content=delta) if self.verbose and self.output_format == "text":
                _write(self.err, self._model_text(delta))
            case ev.ThinkingEnd() if self.verbose and self.output_format == "text":
                _write(self.err, "\n")
            case ev.ResponseComplete(content=answer) if main:  # a sub-agent's goes to its parent
                self._answer(answer)
            case ev.ToolCall():
                self.tool_calls[event.tool_call_id] = {
                    "id": event.tool_call_id,
                    "name": event.tool_name,
                    "args": event.args,
                    "status": "running",
                }
                self._note(f"→ {event.tool_name}: {visible(event.key_arg)}")  # its tabs too
            case ev.ToolResult():
                self._tool_result(event)
            case ev.Usage() if main:
                self.usage = event
            case ev.Compacted():
                self._note(f"… {event.describe()}")
            case ev.Status():
                self._note(f"… {event.message}")
            case ev.ProviderWaiting(seconds=seconds):
                self._waiting(seconds)
            case ev.Error():
                self.errors.append(event.message)
                self._note(f"error: {event.message}")
            case ev.ApprovalRecord():
                self._approval(event)

    def _waiting(self, seconds: int) -> None:
        """A line when the provider falls silent, then one every WAITING_EVERY_S."""
        if seconds == 0:
            self._waiting_said = 0
        elif not self._waiting_said or seconds - self._waiting_said >= WAITING_EVERY_S:
            self._waiting_said = seconds
            self._note(f"… waiting for the provider ({seconds} s)")

    def _tool_result(self, result: ev.ToolResult) -> None:
        entry = self.tool_calls.setdefault(
            result.tool_call_id, {"id": result.tool_call_id, "name": result.tool_name}
        )
        entry.update(status=result.status, result=result.display or result.content)
        if result.status != "denied":
            body = result.display or result.content
            self._note(f"← {result.tool_name} [{result.status}]\n{body}")

    async def prompt_approval(self, request: ApprovalRequest) -> ApprovalReply:
        if request.egress and self.approve_all and not self.allow_private_data_out:
            self._held.add(request.tool_call_id)
            return ApprovalDecision.DENY
        return ApprovalDecision.APPROVE if self.approve_all else ApprovalDecision.DENY

    def _approval(self, record: ev.ApprovalRecord) -> None:
        """One line for every decision, automatic ones included."""
        call = f"{record.tool_name}({json.dumps(record.args, ensure_ascii=True)})"
        if record.decision == "deny":
            denial = {"id": record.tool_call_id, "name": record.tool_name, "args": record.args}
            self.denials.append({**denial, "reason": record.reason})
            asked = not self.approve_all and not record.rule  # a deny rule is not overridden
            hint = " — pass --yes to approve side effects" if asked else ""
            if record.tool_call_id in self._held:
                hint = (
                    " — --yes does not cover what the egress guard holds; add "
                    "--allow-private-data-out to let it through"
                )
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
        text: str,
        interrupted: bool,
        error: str | None,
        model: str,
        save_error: str | None = None,
    ) -> dict[str, Any]:
        return {
            "session_id": session_id,
            "model": model,
            "text": text,
            "usage": _usage_json(self.usage),
            "tool_calls": list(self.tool_calls.values()),
            "denials": self.denials,
            "interrupted": interrupted,
            "error": error,
            "save_error": save_error,
        }


def _write(stream: TextIO, text: str) -> None:
    """Output that cannot be written (a closed pipe, a terminal hung up) is lost, but the
    turn goes on to its end and is saved."""
    try:
        stream.write(text)
        stream.flush()
    except OSError:
        pass


def _usage_json(usage: ev.Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    fields = asdict(usage)
    del fields["session_id"]
    return fields
