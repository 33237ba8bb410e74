"""Large pastes folded in the prompt: `[Pasted text #1 +2000 lines]` stands for the text.

A paste of FOLD_LINES lines or more, or of FOLD_CHARS characters or more (Codex folds at
1,000 characters; Claude Code at 800 characters or 3 lines, which users found too eager),
goes into the prompt as one line, its label, so what is typed after it stays in view. The
label is text in the prompt like any other: deleting it (Backspace or Delete next to it
removes it whole) drops the paste; a label changed by hand no longer stands for anything
and is sent as it reads. What is sent is the text with each label replaced by its paste
(`expand`); the transcript shows the message folded, and the history keeps it folded too
(`FoldedPrompt`): Up brings it back as one line, its pastes under new labels (`refold`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from co_tui.store.drafts import Pasted

FOLD_LINES = 10
FOLD_CHARS = 1_000
LABEL = re.compile(r"\[Pasted text #(\d+)(?: \+\d+ lines| \d+ chars)\]")


@dataclass(frozen=True)
class FoldedPrompt:
    """A prompt as it was typed: its text with the labels, and the pastes they stand for
    (what the history keeps so that Up brings a prompt back folded)."""

    text: str
    pastes: tuple[Pasted, ...]

    def expanded(self) -> str:
        by_label = {p.label: p.text for p in self.pastes}
        return LABEL.sub(lambda m: by_label.get(m.group(0), m.group(0)), self.text)


def is_large(text: str) -> bool:
    return len(text) >= FOLD_CHARS or text.count("\n") + 1 >= FOLD_LINES


def label_for(number: int, text: str) -> str:
    lines = len(text.splitlines())  # a last line break starts no line
    size = f"+{lines} lines" if lines > 1 else f"{len(text)} chars"
    return f"[Pasted text #{number} {size}]"


class PastedTexts:
    """The pastes folded into one prompt, by label; numbered from 1 for the app's life."""

    def __init__(self) -> None:
        self._by_label: dict[str, str] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self._by_label)

    def add(self, text: str) -> str:
        """Keep `text`; the label to put in the prompt in its place."""
        label = label_for(self._next, text)
        self._next += 1
        self._by_label[label] = text
        return label

    def expand(self, text: str) -> str:
        """`text` with every label of a kept paste replaced by the paste (one pass: a paste
        that reads like a label is not expanded again)."""
        if not self._by_label:
            return text
        return LABEL.sub(lambda m: self._by_label.get(m.group(0), m.group(0)), text)

    def folded(self, text: str) -> FoldedPrompt | None:
        """`text` with the pastes its labels stand for; None when it holds none."""
        pastes = self.used_in((text,))
        return FoldedPrompt(text, pastes) if pastes else None

    def refold(self, prompt: FoldedPrompt) -> str:
        """`prompt`'s text, its pastes kept here under new labels (numbered after those
        already here, so a draft's own pastes keep theirs)."""
        new = {p.label: self.add(p.text) for p in prompt.pastes}
        return LABEL.sub(lambda m: new.get(m.group(0), m.group(0)), prompt.text)

    def used_in(self, texts: Iterable[str]) -> tuple[Pasted, ...]:
        """The pastes whose label is in one of `texts`, oldest first."""
        found = {m.group(0) for t in texts for m in LABEL.finditer(t)}
        kept = self._by_label.items()
        return tuple(Pasted(label, body) for label, body in kept if label in found)

    def keep_only(self, texts: Iterable[str]) -> None:
        """Forget the pastes no label in `texts` stands for any more."""
        used = {p.label for p in self.used_in(texts)}
        self._by_label = {k: v for k, v in self._by_label.items() if k in used}

    def restore(self, pastes: Iterable[Pasted]) -> None:
        """Pastes of a kept draft; new ones are numbered after them."""
        for paste in pastes:
            match = LABEL.fullmatch(paste.label)
            if match is None:
                continue
            self._by_label[paste.label] = paste.text
            self._next = max(self._next, int(match.group(1)) + 1)

    def label_ending(self, line_before_cursor: str) -> str | None:
        """The kept paste's label that ends at the cursor, if one does."""
        for match in LABEL.finditer(line_before_cursor):
            if match.end() == len(line_before_cursor) and match.group(0) in self._by_label:
                return match.group(0)
        return None

    def label_starting(self, line_after_cursor: str) -> str | None:
        """The kept paste's label that starts at the cursor, if one does."""
        match = LABEL.match(line_after_cursor)
        if match is not None and match.group(0) in self._by_label:
            return match.group(0)
        return None
