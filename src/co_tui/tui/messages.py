"""The Textual messages that carry a session's events through the app.

Down: `TuiFrontend` posts every orchestrator event to the chat screen as a `SessionEvent`;
the screen's display router (tui/display.py) posts it on as a `ShowEvent` to each widget
that shows it (the transcript for the main session, the sidebar for thinking, tools and
sub-agents). `Settle` asks the transcript to report, through a future, once everything posted
before it is on screen: an approval dialog must not cover an answer still being drawn.
`TranscriptRestored` hands a stored session's replayed events to the transcript at once, so
it can build only the part that is visible.

Across: `ApprovalAsked` (the frontend to the chat screen, which shows the dialog once the
transcript settled), `Notice` / `CommandOutput` / `ConversationCleared` (the app to the chat
screen).

Up: what the user asked for (`Submitted`, `ShellRequested`, `CommandRequested`,
`CancelRequested`, `CopyAnswerRequested`), posted by the chat screen or the command palette
and handled by the app, which runs it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.message import Message

if TYPE_CHECKING:  # pydantic-ai: not before the first frame
    from co_tui.protocol.events import TurnEvent
    from co_tui.protocol.frontend import ApprovalReply, ApprovalRequest


class SessionEvent(Message):
    """An event of the main session or of a sub-agent, as the orchestrator emitted it."""

    def __init__(self, event: TurnEvent) -> None:
        super().__init__()
        self.event = event


class ShowEvent(Message, bubble=False):
    """An event for one widget to show; `subagent`: it belongs to a sub-agent's session."""

    def __init__(self, event: TurnEvent, *, subagent: bool = False) -> None:
        super().__init__()
        self.event = event
        self.subagent = subagent


class Settle(Message, bubble=False):
    """Resolve `done` once the messages posted before this one are handled; with
    `laid_out`, also once the answers they started finished drawing and are laid out."""

    def __init__(self, done: asyncio.Future[None], *, laid_out: bool = False) -> None:
        super().__init__()
        self.done = done
        self.laid_out = laid_out


class TranscriptRestored(Message, bubble=False):
    """A stored conversation's events (orchestrator.replay): the transcript starts over and
    builds only the last `visible` items; the rest are built when scrolled to. With
    `keep_shown` (the session opened at the start) what the transcript shows already, a
    notice or a prompt typed while it loaded, stays, after the conversation."""

    def __init__(
        self, events: Sequence[TurnEvent], visible: int, *, keep_shown: bool = False
    ) -> None:
        super().__init__()
        self.events = tuple(events)
        self.visible = visible
        self.keep_shown = keep_shown


class ApprovalAsked(Message):
    """A call waits for the user's decision; the chat screen resolves `reply` with it."""

    def __init__(self, request: ApprovalRequest, reply: asyncio.Future[ApprovalReply]) -> None:
        super().__init__()
        self.request = request
        self.reply = reply


class Notice(Message):
    """A line for the transcript from the app itself (start-up, a failed command)."""

    def __init__(self, message: str | Text, level: str = "info") -> None:
        super().__init__()
        self.message = message
        self.level = level


class CommandOutput(Message):
    """What a /command shows: Markdown text or any Rich renderable."""

    def __init__(self, content: object) -> None:
        super().__init__()
        self.content = content


class ConversationCleared(Message):
    """/clear: the transcript and the sidebar start over."""


class CommandDone(Message):
    """A /command ran (what it changed outside the session, such as the jobs' inbox, may
    need counting again)."""


class ItemsReleased(Message):
    """The transcript let go of items (archived or cleared). They may have been frozen by an
    idle collection (tui/terminal/idle_gc.py), which only a whole collection can free."""


# -- up: what the user asked for, from the chat screen (or the command palette) to the app


class Submitted(Message):
    """A prompt for a turn."""

    def __init__(self, prompt: str) -> None:
        super().__init__()
        self.prompt = prompt


class ShellRequested(Message):
    """`!cmd`: run a command in the sandbox, outside any turn."""

    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command


class CommandRequested(Message):
    """A /command."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class CancelRequested(Message):
    """Stop the running turn."""


class CopyAnswerRequested(Message):
    """Copy the last answer to the clipboard."""
