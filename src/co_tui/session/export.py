"""A session as Markdown: `/export [file]` in the app and `co-tui sessions export ID [file]`.

`/export` with no file writes to the data folder's exports/ (0700), never into the
repository the app runs in: an export holds the whole conversation.

Both build it from the same events a restored transcript is drawn from
(turn/replay.py): each prompt, each answer, each tool call with its arguments, how
it was decided (from the store's write-ahead tool runs) and its result. The text goes
through the same redaction as the session store, so an export never holds more than the
stored session does. A file is created 0600 and never replaces an existing one.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from co_tui.protocol import events as ev

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

    from co_tui.context.compaction import Compaction
    from co_tui.safety.redaction import Redactor
    from co_tui.session.chat import ChatSession
    from co_tui.store.records import Note
    from co_tui.store.session_store import SessionStore

# How a call was decided, as the store records it (ApprovalRecord.decision).
DECISIONS = {
    "approve": "approved by you",
    "approve_network": "approved by you, with network for that command",
    "approve_all": "approved (approve-all was on)",
    "always": "approved by you, with a rule to always allow it",
    "auto": "allowed without asking (a permission rule or read-only)",
    "deny": "denied by you",
}
STATUS = {
    "ok": "done",
    "failed": "failed",
    "denied": "not run: denied",
    "interrupted": "interrupted",
}


MAX_NUMBERED = 1000  # exports of one session to the exports folder


class ExportError(Exception):
    """The file was not written; the message says why, in one line."""


def default_name(session_id: str) -> str:
    return f"co-tui-{session_id[:8]}.md"


def _fence(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def _events_markdown(events: Iterable[ev.TurnEvent], decisions: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    for event in events:
        match event:
            case ev.TurnStart(prompt=prompt):
                out += ["## You", "", prompt.rstrip(), ""]
            case ev.TextEnd(content=content):
                out += ["## co-tui", "", content.rstrip(), ""]
            case ev.ToolCall(tool_name=name, args=args, tool_call_id=call_id):
                out += [f"### Tool call: `{name}`", ""]
                if args:
                    out += [_fence(json.dumps(args, indent=2, ensure_ascii=False), "json"), ""]
                if call_id in decisions:
                    decided = decisions[call_id]
                    out += [f"Decision: {DECISIONS.get(decided, decided)}", ""]
            case ev.ToolResult(status=status, content=content, display=display):
                out += [f"Result ({STATUS.get(status, status)}):", ""]
                out += [_fence(display or content or "(no output)"), ""]
            case ev.Compacted():
                out += ["*From here on the model was sent a summary of what came before.*", ""]
            case ev.Status(message=message) | ev.Error(message=message):
                out += [f"*{message}*", ""]
            case ev.Interrupted():
                out += ["*interrupted*", ""]
            case _:
                pass
    return out


def session_markdown(
    messages: Sequence[ModelMessage],
    session_id: str,
    *,
    compactions: Sequence[Compaction] = (),
    decisions: Mapping[str, str] | None = None,
    header: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
    notes: Sequence[Note] = (),
) -> str:
    """The whole session as one Markdown document, redacted; `notes`: the errors the
    transcript showed (kept with the stored session)."""
    from co_tui.safety.redaction import shared_redactor
    from co_tui.turn.replay import replay

    lines = [f"# co-tui session {session_id[:8]}", ""]
    lines += [f"- {key}: {value}" for key, value in {"id": session_id, **(header or {})}.items()]
    lines.append("")
    lines += _events_markdown(replay(messages, session_id, compactions, notes), decisions or {})
    text = "\n".join(lines).rstrip() + "\n"
    return (redactor or shared_redactor()).text(text)


def write_new(path: Path, text: str) -> Path:
    """Create `path` (0600) with `text`; an existing file (or link) is never replaced.
    Raises ExportError."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        raise ExportError(
            f"{path} already exists; nothing was written (give another name)"
        ) from None
    except OSError as exc:
        raise ExportError(f"cannot create {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return path


def write_export(text: str, name: str, workspace: Path, session_id: str) -> Path:
    """`/export [name]`: `name` (relative to `workspace`) when given, never replacing a file;
    else a new file in the private exports folder, numbered when the session was exported
    before. Raises ExportError."""
    from co_tui.config.paths import exports_dir
    from co_tui.safety.private_files import private_dir

    if name:
        return write_new(workspace / Path(name).expanduser(), text)
    try:
        folder = private_dir(exports_dir())
    except OSError as exc:
        raise ExportError(f"cannot create {exports_dir()}: {exc.strerror or exc}") from None
    stem = Path(default_name(session_id)).stem
    for attempt in range(1, MAX_NUMBERED + 1):
        path = folder / (f"{stem}.md" if attempt == 1 else f"{stem}-{attempt}.md")
        if not os.path.lexists(path):  # a link there counts as taken: never written through
            return write_new(path, text)
    raise ExportError(f"{folder} holds {MAX_NUMBERED} exports of this session; nothing written")


async def export_open_session(session: ChatSession, name: str) -> str:
    """`/export [file]` in the app: the open session as Markdown, in the data folder's
    exports by default; says where it went. Raises ExportError."""
    import asyncio

    from co_tui.safety.visible import visible
    from co_tui.store.errors import SessionError
    from co_tui.store.records import Note as StoredNote

    if not session.history:
        return "Nothing to export yet: this session has no turns."
    notes: list[StoredNote] = []
    try:
        decisions = await asyncio.to_thread(session.store.decisions, session.session_id)
        notes = (await asyncio.to_thread(session.store.load, session.session_id)).notes
    except SessionError:
        decisions = {}  # never stored: nothing was decided ahead of a run
    text = session_markdown(
        session.history,
        session.session_id,
        compactions=session.window.compactions,
        decisions=decisions,
        header={"model": session.model_label()},
        redactor=session.store.redactor,
        notes=notes,
    )
    # Escaped as `co-tui sessions export` writes it: `cat` on the file replays nothing.
    shown = visible(text, keep="\n\t")
    written = await asyncio.to_thread(
        write_export, shown, name, session.workspace, session.session_id
    )
    where = "" if name else " (your data folder's exports, readable by you only)"
    return f"Exported this session to {written.resolve()}{where}"


def stored_session_markdown(store: SessionStore, id_or_prefix: str) -> tuple[str, str]:
    """(full id, Markdown) of a stored session. Raises SessionError."""
    import time

    info = store.resolve(id_or_prefix)
    loaded = store.load(info.id)
    created = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created))
    header = {"title": info.title, "model": info.model, "directory": info.cwd, "started": created}
    text = session_markdown(
        loaded.messages,
        info.id,
        compactions=loaded.compactions,
        decisions=store.decisions(info.id),
        header={k: v for k, v in header.items() if v},
        redactor=store.redactor,
        notes=loaded.notes,
    )
    return info.id, text
