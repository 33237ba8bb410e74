"""TuiFrontend: the orchestrator's FrontendProtocol, drawn into the chat screen.

Calls arrive on the app's event loop (the turn runs as an async worker on the App), so they
touch widgets directly. They must stay cheap: a text delta only lands in a buffer that the
answer's pump applies at a bounded rate. The main session owns the transcript; any other
session_id (a sub-agent) shows in the sidebar only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

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
from co_tui.tui.visible_text import one_line
from co_tui.tui.widgets.transcript import AssistantMessage, Note, ToolCallBlock
from co_tui.visible import visible

if TYPE_CHECKING:
    from co_tui.tui.app import CoApp
    from co_tui.tui.screens.chat import ChatScreen


class TuiFrontend:
    def __init__(self, app: CoApp, chat: ChatScreen) -> None:
        self.app = app
        self.chat = chat
        self.current: AssistantMessage | None = None
        self.messages: list[AssistantMessage] = []  # this turn's answers
        self.tool_blocks: dict[str, ToolCallBlock] = {}
        self._sub_text: dict[str, list[str]] = {}

    def _main(self, session_id: str) -> bool:
        return session_id == self.app.session_id

    # -- turn boundaries --
    def on_turn_start(self, session_id: str, prompt: str) -> None:
        if self._main(session_id):
            self.messages = []
            self.tool_blocks = {}
            self.chat.sidebar.new_turn()
        else:
            self.chat.sidebar.subagents.start(session_id, prompt)

    def on_turn_end(self, session_id: str, interrupted: bool) -> None:
        if not self._main(session_id):
            self.chat.sidebar.subagents.end(session_id, interrupted)
            return
        if self.current is not None:
            self.current.finish(interrupted)
            self.current = None
        elif interrupted:
            items = self.chat.transcript.items
            last = items[-1] if items else None
            if isinstance(last, AssistantMessage) and last in self.messages:
                last.mark_interrupted()
            else:
                self.chat.transcript.add(Note("interrupted", "warning"))
        for call_id, block in self.tool_blocks.items():
            if block.status == "running":
                status = "interrupted" if interrupted else "failed"
                block.set_result(status, "", None, None)
                self.chat.sidebar.tool_result(call_id, block.tool_name, status, None)

    # -- thinking: sidebar only --
    def on_thinking_start(self, session_id: str) -> None:
        if self._main(session_id):
            self.chat.sidebar.thinking_start()
        else:
            self.chat.sidebar.subagent_note(session_id, "thinking…")

    def on_thinking_delta(self, session_id: str, delta: str) -> None:
        if self._main(session_id):
            self.chat.sidebar.thinking_delta(delta)

    def on_thinking_end(self, session_id: str, text: str) -> None:
        pass

    # -- text --
    def on_text_start(self, session_id: str) -> None:
        if not self._main(session_id):
            self._sub_text[session_id] = []
            return
        if self.current is not None:
            self.current.finish()
        self.current = AssistantMessage()
        self.messages.append(self.current)
        self.chat.transcript.add(self.current)

    def on_text_delta(self, session_id: str, delta: str) -> None:
        if self._main(session_id):
            if self.current is not None:
                self.current.feed(delta)
        else:
            self._sub_text.setdefault(session_id, []).append(delta)

    def on_text_end(self, session_id: str, text: str) -> None:
        if not self._main(session_id):
            self._sub_text.pop(session_id, None)
            self.chat.sidebar.subagent_note(session_id, text)
            return
        if self.current is not None:
            self.current.finish()
            self.current = None
        if text.strip():
            self.app.last_answer = text

    # -- tools --
    def on_tool_call(self, session_id: str, call: ToolCallInfo) -> None:
        if not self._main(session_id):
            label = session_id[:8]
            self.chat.sidebar.tool_call(call.tool_call_id, call.tool_name, call.key_arg, label)
            self.chat.sidebar.subagents.tool_call(
                session_id, call.tool_call_id, call.tool_name, call.key_arg
            )
            return
        block = ToolCallBlock(call.tool_call_id, call.tool_name, call.key_arg)
        self.tool_blocks[call.tool_call_id] = block
        self.chat.transcript.add(block)
        self.chat.sidebar.tool_call(call.tool_call_id, call.tool_name, call.key_arg)

    def on_tool_result(self, session_id: str, result: ToolResultInfo) -> None:
        self.chat.sidebar.tool_result(
            result.tool_call_id, result.tool_name, result.status, result.duration_s
        )
        if not self._main(session_id):
            self.chat.sidebar.subagents.tool_result(
                session_id, result.tool_call_id, result.tool_name, result.status
            )
            return
        block = self.tool_blocks.get(result.tool_call_id)
        if block is None:
            block = ToolCallBlock(result.tool_call_id, result.tool_name, "")
            self.tool_blocks[result.tool_call_id] = block
            self.chat.transcript.add(block)
        block.set_result(result.status, result.content, result.display, result.duration_s)

    # -- usage, status, errors --
    def on_usage(self, session_id: str, usage: UsageInfo) -> None:
        if self._main(session_id):
            self.app.update_usage(usage.input_tokens, usage.output_tokens, usage.requests)
        else:
            self.chat.sidebar.subagents.usage(
                session_id, usage.input_tokens, usage.output_tokens, usage.requests
            )

    def on_status(self, session_id: str, status: StatusInfo) -> None:
        if not self._main(session_id):
            self.chat.sidebar.subagent_note(session_id, status.message)
            return
        self.chat.transcript.add(Note(status.message, status.level))
        if status.retry_in_s is not None:
            self.chat.status_bar.set(note=f"retrying in {status.retry_in_s:g}s")

    def on_error(self, session_id: str, message: str) -> None:
        if not self._main(session_id):
            self.chat.sidebar.subagents.error(session_id, message)
            return
        self.chat.transcript.add(Note(message, "error"))

    # -- approvals --
    def on_approval(self, session_id: str, record: ApprovalRecord) -> None:
        if not self._main(session_id):
            words = _DECISIONS.get(record.decision, (record.decision, "", ""))[0]
            name = visible(record.tool_name, keep="\n\t")
            self.chat.sidebar.subagent_note(session_id, f"{words} {name}")
            return
        self.chat.transcript.add(Note(approval_line(record), "decision"))

    async def prompt_approval(self, session_id: str, request: ApprovalRequest) -> ApprovalReply:
        from co_tui.tui.screens.approval import ApprovalScreen

        # The answer that led here must be on screen before the dialog covers the chat:
        # a screen under a modal is not laid out again until the modal closes.
        for message in self.messages:
            await message.wait_settled()
        await self.chat.transcript.layout_settled()
        self.chat.status_bar.set(note="waiting for your decision")
        try:
            decision = await self.app.push_screen_wait(ApprovalScreen(request))
        finally:
            self.chat.status_bar.set(note="")
        return decision if decision is not None else ApprovalDecision.DENY


# decision: (words, glyph, style). Automatic approvals stay quiet; the user's own decisions
# stand out, approve-all most of all (it covers every later call of the session).
_DECISIONS = {
    "auto": ("auto-approved", "·", "dim"),
    "approve": ("you approved", "✓", "green"),
    "always_allow": ("you always allow", "✓", "green"),
    "approve_all": ("you approved ALL calls for this session, starting with", "✓✓", "bold yellow"),
    "deny": ("denied", "⊘", "magenta"),
}


def approval_line(record: ApprovalRecord) -> Text:
    """One transcript line per decision: what, how it was decided, and why."""
    from co_tui.orchestrator.approvals import key_argument

    words, glyph, style = _DECISIONS.get(record.decision, (record.decision, "·", ""))
    line = Text(f"{glyph} {words} ", style=style)
    line.append(visible(record.tool_name, keep=""), style=f"{style} bold")
    what = key_argument(record.tool_name, record.args)
    if what:
        line.append(" ")
        line.append_text(one_line(what, 60, style=style))
    if record.read_only:
        line.append(", read-only", style=style)
    line.append(f" — {visible(record.reason, keep='')}", style="dim")
    return line
