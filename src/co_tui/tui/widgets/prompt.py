"""The prompt: multi-line input, history recall, /command completion.

Enter sends; Shift+Enter (terminals with the Kitty protocol) or Ctrl+J inserts a newline.
Up/Down recall history when the cursor is on the first/last line; Ctrl+R searches it
(tui/widgets/history_search.py). Ctrl+G edits the text in $VISUAL/$EDITOR
(co_tui/tui/terminal/editor.py). A large paste shows as one line, its label (tui/pasted.py);
what is sent has the paste in its place. What the prompt holds and has not sent is its
`draft()`, kept on disk by the chat screen (co_tui/store/drafts.py). The prompt stays live
while a turn runs: what is sent then waits in `queued` (the chat screen sends it when the
turn ends), and Up on an empty prompt takes the last queued message back for editing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from co_tui.safety.private_files import open_private
from co_tui.safety.redaction import REDACTED, shared_redactor
from co_tui.store.drafts import Draft, Pasted
from co_tui.tui.pasted import LABEL, FoldedPrompt, PastedTexts, is_large
from co_tui.tui.widgets.resting_cursor import RestingCursorTextArea

if TYPE_CHECKING:
    from co_tui.session.commands.custom import CustomCommand

HISTORY_LIMIT = 1000


class PromptHistory:
    """Prompts, one JSON value a line (so multi-line prompts survive), newest last: the
    text sent, or for a prompt that held folded pastes an object with the text as typed
    (`folded`, the labels in it) and the `pastes`, so that Up brings it back folded.

    The file (0600, in the 0700 data folder) never holds a secret: a line is stored with
    configured secrets and credential shapes replaced by [REDACTED], and not at all when
    that leaves nothing else. What is in memory for Up/Down this session is as typed.
    Loading redacts what an older version stored, and rewrites the file if it changed."""

    def __init__(self, path: Path | None = None) -> None:
        self.path: Path | None = None
        self.entries: list[str] = []  # as sent: what Ctrl+R searches
        self._folds: dict[str, FoldedPrompt] = {}  # an entry's folded form, if it had one
        self._cursor: int | None = None
        self._draft = ""
        if path is not None:
            self.open(path)

    def open(self, path: Path) -> None:
        """Read the file and store new prompts in it from now on. The app opens it once the
        settings are loaded, so that their secrets are redacted; prompts sent before that
        are stored after what the file holds."""
        earlier = [(text, self._folds.get(text)) for text in self.entries]
        self.entries, self._folds = [], {}
        self.path = path
        if path.is_file():
            try:
                raw = path.read_text(encoding="utf-8")
            except OSError:
                raw = ""
            clean = shared_redactor().text(raw)  # one pass over the file: JSON stays JSON
            lines = clean.splitlines()
            if clean is raw:  # as usual: only the newest lines are decoded
                loaded = _newest(lines, HISTORY_LIMIT)
            else:  # an older version stored secrets: rewrite without them
                decoded = [e for line in lines if (e := _decode(line))]
                loaded = [e for e in decoded if e.sent.replace(REDACTED, "").strip()]
                _rewrite(path, loaded)
                loaded = loaded[-HISTORY_LIMIT:]
            for line in loaded:
                self._remember(line.sent, line.folded)
        for text, folded in earlier:
            self.add(text, folded)

    def add(self, text: str, folded: FoldedPrompt | None = None) -> None:
        """`text` as sent; `folded`: as typed, when it held folded pastes."""
        self._cursor = None
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return
        self._remember(text, folded)
        clean = _redacted(text)
        if self.path is None or clean is None:
            return
        try:
            with open_private(self.path) as fh:
                fh.write(_HistoryLine(clean, _redacted_fold(folded)).encode() + "\n")
        except OSError:
            pass  # history is a convenience; never fail a prompt over it

    def _remember(self, text: str, folded: FoldedPrompt | None) -> None:
        self.entries.append(text)
        if folded is not None:
            self._folds[text] = folded

    def folded(self, text: str) -> FoldedPrompt | None:
        """How the entry `text` was typed, when it held folded pastes."""
        return self._folds.get(text)

    def previous(self, current: str) -> str | None:
        if not self.entries:
            return None
        if self._cursor is None:
            self._draft = current
            self._cursor = len(self.entries)
        if self._cursor == 0:
            return None
        self._cursor -= 1
        return self.entries[self._cursor]

    def next(self) -> str | None:
        if self._cursor is None:
            return None
        self._cursor += 1
        if self._cursor >= len(self.entries):
            self._cursor = None
            return self._draft
        return self.entries[self._cursor]


class PromptInput(RestingCursorTextArea):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        # Shown in the Footer; the keys themselves are handled in _on_key (see there).
        Binding("enter", "submit", "Send"),
        Binding("ctrl+j,shift+enter", "newline", "New line", show=False),
        Binding("tab", "complete", "Complete", show=False),
        Binding("ctrl+g", "edit_in_editor", "Editor", show=False),
        Binding("ctrl+d", "quit_or_delete", "Quit", show=False),
        Binding("ctrl+c", "interrupt_or_copy", "Cancel / exit", show=False),
        # Ctrl+Z suspends co-tui (the app's binding); undo is readline's Ctrl+_ (Ctrl+/ in
        # most terminals), redo stays TextArea's Ctrl+Y.
        Binding("ctrl+underscore", "undo", "Undo", show=False),
    ]

    busy: reactive[bool] = reactive(False)  # a turn is running: shown, not blocking
    queued: reactive[tuple[str, ...]] = reactive(())  # sent while busy, oldest first
    mention_open: reactive[bool] = reactive(False)  # the @ picker shows: it takes these keys

    MENTION_KEYS = ("up", "down", "enter", "tab", "escape")

    @dataclass
    class MentionKey(Message):
        """A key for the open @ picker (the prompt keeps the focus while it is open)."""

        key: str

    @dataclass
    class Submitted(Message):
        text: str

    class DraftSetAside(Message):
        """Ctrl+C emptied the prompt into its history: it does not count towards exiting."""

    def __init__(self, history: PromptHistory, **kwargs: object) -> None:
        super().__init__(
            soft_wrap=True, show_line_numbers=False, compact=True, tab_behavior="focus",
            **kwargs,  # type: ignore[arg-type]
        )  # fmt: skip
        self.prompt_history = history
        self.pasted = PastedTexts()  # the large pastes folded into the text, by label
        self.custom_commands: dict[str, CustomCommand] = {}  # Tab completes them too

    async def _on_key(self, event: events.Key) -> None:
        # Enter is handled here, in the widget's own queue, rather than by a priority
        # binding: a priority binding fires when the key reaches the app, before keys typed
        # just before it (a fast typist, a paste without bracketed paste) reach the text.
        if self.mention_open and event.key in self.MENTION_KEYS:
            event.stop()
            event.prevent_default()
            self.post_message(self.MentionKey(event.key))
            return
        if event.key in ("enter", "ctrl+j", "shift+enter"):
            event.stop()
            event.prevent_default()
            if event.key == "enter":
                self.action_submit()
            else:
                self.action_newline()
            return
        if await self._run_own_binding(event):
            return
        await super()._on_key(event)

    async def _run_own_binding(self, event: events.Key) -> bool:
        """Run the prompt's own binding for this key, if any, here and now.

        Textual runs a widget's (non-priority) bindings when the key has bubbled up to the
        app, while the widget inserts printable keys at once: in a burst of keys (a loaded
        machine, a fast typist, a macro) a Backspace then deleted after the letters typed
        after it, or ran after Enter had sent the text (textualize/textual#6605). Priority
        bindings already ran before the key got here; the rest is what Textual's bubbling
        would find first on the focused widget, so the same action runs, in order.
        tests/tui/test_prompt_keys.py fails once Textual keeps the order itself."""
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()  # the app does not run it a second time
                return True
        return False

    def watch_busy(self, busy: bool) -> None:
        self.set_class(busy, "-busy")

    def action_submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        self._add_to_history(text)
        self.clear()
        self.post_message(self.Submitted(text))

    # -- large pastes --
    async def _on_paste(self, event: events.Paste) -> None:
        # Terminals paste line breaks as CR (as if typed); the text area reads any break.
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        if self.read_only or not is_large(text):
            return  # TextArea's own handler inserts it
        event.prevent_default()  # the handlers of the classes below would insert it all
        self._user_active()
        label = self.pasted.add(text)
        if result := self._replace_via_keyboard(label, *self.selection):
            self.move_cursor(result.end_location)

    def action_delete_left(self) -> None:
        """Backspace; right after a paste's label it deletes the label (and the paste)."""
        row, column = self.cursor_location
        label = self.pasted.label_ending(self.line_before_cursor())
        if label is not None and self.selection.is_empty:
            self._delete_via_keyboard((row, column - len(label)), (row, column))
            return
        super().action_delete_left()

    def action_delete_right(self) -> None:
        """Delete; right before a paste's label it deletes the label (and the paste)."""
        row, column = self.cursor_location
        label = self.pasted.label_starting(self.document.get_line(row)[column:])
        if label is not None and self.selection.is_empty:
            self._delete_via_keyboard((row, column), (row, column + len(label)))
            return
        super().action_delete_right()

    def expanded(self, text: str) -> str:
        """`text` (the prompt's, or a queued message) with each paste in its label's place."""
        return self.pasted.expand(text)

    def forget_unused_pastes(self) -> None:
        self.pasted.keep_only((self.text, *self.queued))

    # -- the draft: what is here and not sent --
    def draft(self) -> Draft:
        texts = (self.text, *self.queued)
        return Draft(self.text, self.pasted.used_in(texts), self.queued)

    def restore_draft(self, draft: Draft) -> None:
        """A kept draft back: its queued messages and text before what is typed now; the
        cursor stays at the end, where the typing goes on."""
        self.pasted.restore(draft.pastes)
        kept = "\n".join(t for t in (*draft.queued, draft.text, self.text) if t.strip())
        if kept:
            self._set_text(kept, at_end=True)

    def action_newline(self) -> None:
        self.insert("\n")

    # -- the queue --
    def enqueue(self, text: str) -> None:
        self.queued = (*self.queued, text)

    def next_queued(self) -> str | None:
        if not self.queued:
            return None
        first, *rest = self.queued
        self.queued = tuple(rest)
        return first

    def take_back_last(self) -> bool:
        """The last queued message back into the prompt, before any draft. False: none."""
        if not self.queued:
            return False
        *rest, last = self.queued
        self.queued = tuple(rest)
        self._take_back(last)
        return True

    def take_back_all(self) -> None:
        """Every queued message back into the prompt (a cancelled turn sends none of them)."""
        if self.queued:
            messages, self.queued = self.queued, ()
            self._take_back("\n".join(messages))

    def _take_back(self, text: str) -> None:
        draft = self.text
        self.text = f"{text}\n{draft}" if draft.strip() else text
        lines = text.split("\n")
        self.move_cursor((len(lines) - 1, len(lines[-1])))

    def action_edit_in_editor(self) -> None:
        """Ctrl+G: the draft in $VISUAL/$EDITOR; what it saved replaces the draft."""
        from co_tui.tui.terminal.editor import edit_in_editor, editor_command

        edited = edit_in_editor(self.app, self.text, editor_command())
        if edited.text is None:
            self.app.notify(f"{edited.problem}; the draft is unchanged", severity="warning")
        else:
            self._set_text(edited.text, at_end=True)
        edited.discard()  # the prompt holds the draft now, edited or not
        self.focus()

    # -- @ mentions --
    def line_before_cursor(self) -> str:
        row, column = self.cursor_location
        return self.document.get_line(row)[:column]

    def replace_mention(self, text: str) -> None:
        """Put `text` (and a space) in place of the `@` word that ends at the cursor."""
        from co_tui.tui.widgets.mention_picker import mention_at_cursor

        before = self.line_before_cursor()
        typed = mention_at_cursor(before)
        if typed is None:
            return
        row, column = self.cursor_location
        start = before.rindex("@")
        self.replace(f"{text} ", (row, start), (row, column))
        self.move_cursor((row, start + len(text) + 1))

    def action_complete(self) -> None:
        text = self.text
        if not text.startswith("/") or " " in text or "\n" in text:
            self.app.action_focus_next()
            return
        from co_tui.session import commands

        matches = commands.completions(text, self.custom_commands)
        if not matches:
            return
        common = matches[0] if len(matches) == 1 else _common_prefix(matches)
        completed = common + (" " if len(matches) == 1 else "")
        if completed != text:
            self.text = completed
            self.move_cursor(self.document.end)

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and not self.text and self.take_back_last():
            return
        if not select and self.cursor_location[0] == 0:
            recalled = self.prompt_history.previous(self.text)
            if recalled is not None:
                self.recall(recalled, at_end=False)
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        last_row = self.document.line_count - 1
        if not select and self.cursor_location[0] == last_row:
            recalled = self.prompt_history.next()
            if recalled is not None:
                self.recall(recalled, at_end=True)
            return
        super().action_cursor_down(select)

    def recall(self, entry: str, *, at_end: bool = True) -> None:
        """A history entry (or the draft set aside for Up) into the prompt; one that held
        large pastes comes back folded, its pastes under new labels."""
        folded = self.prompt_history.folded(entry)
        self._set_text(entry if folded is None else self.pasted.refold(folded), at_end)

    def _set_text(self, text: str, at_end: bool) -> None:
        self.text = text
        self.move_cursor(self.document.end if at_end else (0, len(text.split("\n")[0])))

    async def action_quit_or_delete(self) -> None:
        """Ctrl+D as in a shell: on an empty prompt it quits; with a draft it deletes forward."""
        if self.text:
            self.action_delete_right()
            return
        await self.run_action("app.quit")

    async def action_interrupt_or_copy(self) -> None:
        if self.selected_text:
            self.action_copy()
            return
        if self.text.strip() and not self.busy:
            self.set_draft_aside()
            return
        await self.run_action("screen.ctrl_c")

    def set_draft_aside(self) -> None:
        """Ctrl+C on a draft empties the prompt without losing it: Up brings it back."""
        self._add_to_history(self.text)
        self.clear()
        self.post_message(self.DraftSetAside())

    def _add_to_history(self, text: str) -> None:
        self.prompt_history.add(self.pasted.expand(text), self.pasted.folded(text))


@dataclass(frozen=True)
class _HistoryLine:
    """One line of the history file: the prompt as sent, and as typed if it was folded."""

    sent: str
    folded: FoldedPrompt | None = None

    def encode(self) -> str:
        if self.folded is None:
            return json.dumps(self.sent, ensure_ascii=False)
        pastes = [{"label": p.label, "text": p.text} for p in self.folded.pastes]
        return json.dumps({"folded": self.folded.text, "pastes": pastes}, ensure_ascii=False)


def _decode(line: str) -> _HistoryLine | None:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    if isinstance(value, str):
        return _HistoryLine(value) if value else None
    return _decode_folded(value)


def _decode_folded(value: object) -> _HistoryLine | None:
    """A folded prompt's object; None for anything else (a line is never trusted to fit)."""
    if not isinstance(value, dict):
        return None
    text, pastes = value.get("folded"), value.get("pastes")
    if not isinstance(text, str) or not isinstance(pastes, list):
        return None
    kept: list[Pasted] = []
    for paste in pastes:
        if not isinstance(paste, dict):
            return None
        label, body = paste.get("label"), paste.get("text")
        if not isinstance(label, str) or not isinstance(body, str) or not LABEL.fullmatch(label):
            return None
        kept.append(Pasted(label, body))
    folded = FoldedPrompt(text, tuple(kept))
    sent = folded.expanded()
    return _HistoryLine(sent, folded) if sent else None


def _newest(lines: list[str], limit: int) -> list[_HistoryLine]:
    """The last `limit` entries the lines hold, oldest first (lines that are not one are
    skipped), decoding no more lines than that takes."""
    newest: list[_HistoryLine] = []
    for line in reversed(lines):
        if len(newest) == limit:
            break
        if entry := _decode(line):
            newest.append(entry)
    newest.reverse()
    return newest


def _rewrite(path: Path, entries: list[_HistoryLine]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open_private(tmp, "w") as fh:
            fh.writelines(e.encode() + "\n" for e in entries)
        os.replace(tmp, path)
    except OSError:
        pass


def _redacted_fold(folded: FoldedPrompt | None) -> FoldedPrompt | None:
    """The folded form as the file may hold it: its text and each paste redacted."""
    if folded is None:
        return None
    redact = shared_redactor().text
    pastes = tuple(Pasted(p.label, redact(p.text)) for p in folded.pastes)
    return FoldedPrompt(redact(folded.text), pastes)


def _redacted(text: str) -> str | None:
    """The prompt as the history file may hold it; None when it is only secrets."""
    clean = shared_redactor().text(text)
    if clean != text and not clean.replace(REDACTED, "").strip():
        return None
    return clean


def _common_prefix(items: list[str]) -> str:
    first, last = min(items), max(items)
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    return first[:i]


class CompletionHint(Static):
    """One line under the prompt: matching /commands while one is being typed."""

    def show_for(self, text: str, custom: Mapping[str, CustomCommand] | None = None) -> None:
        hint = None
        if text.startswith("/"):  # else no hint, and no need for the commands (and pydantic)
            from co_tui.session import commands

            hint = commands.hint_for(text, custom)
        self.update(hint or "")
        self.display = hint is not None
