"""The `@` picker: while the word at the prompt's cursor starts with `@`, workspace files and
vault notes that fuzzily match what follows it, best first (co_tui/context/attachments.py lists
them; Textual's FuzzySearch scores and marks the matched letters).

The prompt keeps the focus: it sends `query` here (None: no `@` word at the cursor) and,
while the picker is open, its Up/Down/Enter/Tab/Esc; choosing posts `Chosen` with the text
to put in place of the `@` word ("@src/app.py", "@note:Inbox.md", quoted when it has a
space). The candidates are listed in a thread worker each time the picker opens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import work
from textual.fuzzy import FuzzySearch
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from co_tui.context.attachments import NOTE_PREFIX, vault_notes, workspace_files
from co_tui.safety.visible import is_plain, visible

SHOWN = 8
MAX_SCORED = 2_000
# The `@` word that ends at the cursor (same start rule as co_tui.context.attachments.MENTION).
AT_CURSOR = re.compile(r'(?<![\w.@/\\])@("?[^\s"]*)$')


def mention_at_cursor(line_before_cursor: str) -> str | None:
    """What follows `@` in the word being typed, or None when it is no mention."""
    match = AT_CURSOR.search(line_before_cursor)
    return None if match is None else match.group(1).lstrip('"')


@dataclass(frozen=True)
class Candidate:
    path: str
    is_note: bool

    @property
    def key(self) -> str:
        """What is matched against the query: notes with their `note:` prefix."""
        return f"{NOTE_PREFIX}{self.path}" if self.is_note else self.path

    @property
    def inserted(self) -> str:
        prefix = NOTE_PREFIX if self.is_note else ""
        path = f'"{self.path}"' if " " in self.path else self.path
        return f"@{prefix}{path}"


class MentionPicker(OptionList):
    DEFAULT_CSS = """
    MentionPicker {
        height: auto;
        max-height: 10;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
        padding: 0 1;
        display: none;
    }
    MentionPicker.-open { display: block; }
    """

    mention: reactive[str | None] = reactive(None, init=False)
    open: reactive[bool] = reactive(False, init=False)

    @dataclass
    class Chosen(Message):
        text: str  # to replace the `@` word with

    def __init__(self, workspace: Path, vault: Path | None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.workspace = workspace
        self.vault = vault
        self.can_focus = False
        self.border_title = "attach · ↑↓ choose · Enter insert · Esc close"
        self._candidates: list[Candidate] | None = None
        self._shown: list[Candidate] = []
        self._dismissed = False  # Esc: closed until the cursor leaves the `@` word

    def watch_open(self, open_: bool) -> None:
        self.set_class(open_, "-open")

    def dismiss(self) -> None:
        self._dismissed = True
        self.open = False

    def watch_mention(self, query: str | None) -> None:
        if query is None:
            self.open = self._dismissed = False
            self._candidates = None  # listed again next time: files come and go
            return
        if self._dismissed:
            return
        if self._candidates is None:
            self._list_candidates()
            return
        self._show(query)

    @work(thread=True, exclusive=True, group="mention-candidates", exit_on_error=False)
    def _list_candidates(self) -> None:
        files = [Candidate(p, False) for p in workspace_files(self.workspace)]
        notes = [Candidate(p, True) for p in vault_notes(self.vault)]
        if not get_current_worker().is_cancelled:  # a newer listing was started meanwhile
            self.app.call_from_thread(self._listed, files + notes)

    def _listed(self, candidates: list[Candidate]) -> None:
        self._candidates = candidates
        if self.mention is not None and not self._dismissed:
            self._show(self.mention)

    def _show(self, query: str) -> None:
        candidates = self._candidates or []
        if query:
            self._rank(query, candidates)
        else:
            self._display(query, [(c, ()) for c in candidates[:SHOWN]])

    @work(thread=True, exclusive=True, group="mention-rank", exit_on_error=False)
    def _rank(self, query: str, candidates: list[Candidate]) -> None:
        """The best matches, off the event loop (thousands of paths take a while)."""
        best = rank(query, candidates)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._display, query, best)

    def _display(self, query: str, best: list[tuple[Candidate, Sequence[int]]]) -> None:
        if query != self.mention or self._dismissed:  # typed on meanwhile
            return
        self._shown = [c for c, _ in best]
        self.clear_options()
        self.add_options(Option(_label(c, offsets)) for c, offsets in best)
        self.open = bool(best)
        if best:
            self.highlighted = 0

    def move(self, step: int) -> None:
        if self._shown:
            current = self.highlighted or 0
            self.highlighted = (current + step) % len(self._shown)

    def choose(self) -> bool:
        """Post the highlighted candidate; False when none is shown."""
        if not self.open or self.highlighted is None or not self._shown:
            return False
        self.post_message(self.Chosen(self._shown[self.highlighted].inserted))
        self.mention = None
        return True

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.highlighted = event.option_index
        self.choose()


def rank(query: str, candidates: list[Candidate]) -> list[tuple[Candidate, Sequence[int]]]:
    """The SHOWN best fuzzy matches of `query`, with the offsets of the matched letters.
    A quick regular expression (the letters in order) keeps only what can match, and at
    most MAX_SCORED of those are scored."""
    letters = re.compile(".*?".join(map(re.escape, query)), re.IGNORECASE)
    possible = [c for c in candidates if letters.search(c.key)][:MAX_SCORED]
    search = FuzzySearch()
    scored = [(search.match(query, c.key), c) for c in possible]
    ranked = sorted((s for s in scored if s[0][0] > 0), key=lambda s: -s[0][0])
    return [(c, offsets) for (_, offsets), c in ranked[:SHOWN]]


def _label(candidate: Candidate, offsets: Sequence[int]) -> Text:
    key = candidate.key
    if not is_plain(key, ""):  # a file name with hidden characters: shown escaped, unmarked
        return Text(visible(key, keep=""))
    label = Text(key)
    if candidate.is_note:
        label.stylize("dim", 0, len(NOTE_PREFIX))
    for offset in offsets:
        label.stylize("bold reverse", offset, offset + 1)
    return label
