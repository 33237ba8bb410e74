"""`@` mentions: a prompt's `@path` (a workspace file) and `@note:path` (a note in the
Obsidian vault) attach that file's text for the model, with its origin noted.

What the user typed stays as typed; the model gets it followed by each attached file
("attached file: src/app.py (120 lines)" and the text in a fence), each one a `TextContent`
whose metadata names it (`attachment_of` reads it back: the egress guard counts the file as
private, from this tag, never from the text). Files are read through
co_tui.safety.safe_read: only inside the workspace or vault, never through a symbolic link, only
regular files (no FIFO or device), UTF-8 text without NUL bytes, at most MAX_FILE_BYTES
each (a longer one is cut, and says so). A mention that names nothing is left as prose;
one that names something that cannot be attached gets a note saying why. An e-mail address
(a@b.com) is not a mention: `@` must start a word.

Front-independent: ChatSession.run expands the prompt, so the app and `-p` both attach.
This module also lists what can be mentioned, for the app's picker.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_tui.safety.safe_read import NotFound, ReadRefused, read_text_within, walk_within

if TYPE_CHECKING:
    from pydantic_ai.messages import TextContent

NOTE_PREFIX = "note:"
MAX_FILE_BYTES = 100_000
MAX_ATTACHMENTS = 10
MAX_CANDIDATES = 5_000
GIT_TIMEOUT_S = 5.0
# A repository's own config can name programs git runs (core.fsmonitor runs on every index
# read): a workspace is someone else's, so listing its files must start none of them.
GIT_SAFELY = ("git", "-c", "core.fsmonitor=false", "--no-optional-locks")
GIT_LS_FILES = ("ls-files", "-z", "--cached", "--others", "--exclude-standard")
# Folders a walk outside git skips besides hidden ones: dependencies and build output.
SKIPPED_FOLDERS = frozenset(
    {"node_modules", "__pycache__", "venv", "dist", "build", "target", "vendor", "site-packages"}
)
# `@` at the start of a word (not after a letter, digit, dot or another @: not an e-mail),
# then `note:` maybe, then a "quoted path" (for spaces) or a run of non-space characters.
MENTION = re.compile(r'(?<![\w.@/\\])@(note:)?(?:"([^"\n]+)"|([^\s"`<>]+))')
TRAILING = ".,;:!?)]}'"  # punctuation after a mention ends the sentence, not the path


@dataclass(frozen=True)
class Mention:
    text: str  # as typed, e.g. @src/app.py
    path: str
    in_vault: bool

    @property
    def origin(self) -> str:
        return f"{NOTE_PREFIX}{self.path}" if self.in_vault else self.path


@dataclass(frozen=True)
class Attachment:
    mention: Mention
    text: str = ""
    truncated: bool = False
    problem: str = ""  # non-empty: not attached, and why

    @property
    def lines(self) -> int:
        return self.text.count("\n") + (0 if self.text.endswith("\n") or not self.text else 1)

    @property
    def note(self) -> str:
        """One line for the transcript."""
        if self.problem:
            return f"not attached: {self.mention.text} {self.problem}"
        cut = f", cut at {MAX_FILE_BYTES:,} bytes" if self.truncated else ""
        return f"attached {self.mention.origin} ({_count_lines(self.lines)}{cut})"


@dataclass(frozen=True)
class Expanded:
    """The prompt for the model, and what happened to each mention that named something."""

    prompt: str  # as one text (what is shown and stored as the title)
    attachments: tuple[Attachment, ...] = ()
    typed: str = ""

    @property
    def attached(self) -> list[Attachment]:
        return [a for a in self.attachments if not a.problem]

    def content(self) -> list[str | TextContent]:
        """What the model is sent: the typed text, then each file, tagged as attached."""
        from pydantic_ai.messages import TextContent

        if not self.attached:
            return [self.prompt]
        items: list[str | TextContent] = [self.typed]
        for attachment in self.attached:
            kind = "note" if attachment.mention.in_vault else "file"
            tag = {TAG: "attachment", "kind": kind, "path": attachment.mention.path}
            items.append(TextContent(_block(attachment), metadata=tag))
        return items


def mentions(text: str) -> list[Mention]:
    """Every distinct mention in `text`, in order."""
    found: dict[str, Mention] = {}
    for match in MENTION.finditer(text):
        note, quoted, bare = match.groups()
        path = quoted if quoted is not None else bare.rstrip(TRAILING)
        if not path:
            continue
        typed = match.group(0) if quoted is not None else f"@{note or ''}{path}"
        mention = Mention(typed, path, in_vault=note is not None)
        found.setdefault(mention.origin, mention)
    return list(found.values())


def expand(text: str, workspace: Path, vault: Path | None = None) -> Expanded:
    """`text` with the files its mentions name attached (see the module's docstring)."""
    attachments: list[Attachment] = []
    for mention in mentions(text):
        attachment = _attach(mention, workspace, vault)
        if attachment is None:
            continue
        if len(attachments) == MAX_ATTACHMENTS and not attachment.problem:
            attachment = Attachment(mention, problem=f"(at most {MAX_ATTACHMENTS} files a prompt)")
        attachments.append(attachment)
    if not any(not a.problem for a in attachments):
        return Expanded(text, tuple(attachments), text)
    blocks = [text]
    for attachment in attachments:
        if not attachment.problem:
            blocks.append(_block(attachment))
    return Expanded("\n\n".join(blocks), tuple(attachments), text)


def _attach(mention: Mention, workspace: Path, vault: Path | None) -> Attachment | None:
    """The file's text; an Attachment with a problem when it cannot be attached; None when
    the mention names nothing (prose such as "@everyone")."""
    root = vault if mention.in_vault else workspace
    if root is None:
        return Attachment(mention, problem="(no Obsidian vault is configured)")
    try:
        text = read_text_within(root, mention.path, limit=MAX_FILE_BYTES + 1, truncate=True)
    except NotFound:
        return None
    except ReadRefused as exc:
        return Attachment(mention, problem=f"({_reason(exc)})")
    if "\0" in text:
        return Attachment(mention, problem="(a binary file, not text)")
    truncated = len(text.encode("utf-8")) > MAX_FILE_BYTES
    if truncated:
        text = text.encode("utf-8")[:MAX_FILE_BYTES].decode("utf-8", errors="ignore")
    return Attachment(mention, text, truncated)


def _reason(exc: ReadRefused) -> str:
    if exc.reason.startswith("leaves its folder"):
        return "outside the workspace and the vault: only files inside them are attached"
    return f"{exc.relative or 'it'} {exc.reason}"


def _count_lines(n: int) -> str:
    return "1 line" if n == 1 else f"{n:,} lines"


def _block(attachment: Attachment) -> str:
    longest = max((len(run) for run in re.findall(r"`+", attachment.text)), default=0)
    fence = "`" * max(3, longest + 1)
    kind = "note" if attachment.mention.in_vault else "file"
    path = attachment.mention.path
    cut = f", the first {MAX_FILE_BYTES:,} bytes" if attachment.truncated else ""
    body = attachment.text if attachment.text.endswith("\n") else attachment.text + "\n"
    header = f"attached {kind}: {path} ({_count_lines(attachment.lines)}{cut})"
    return f"{header}\n{fence}\n{body}{fence}"


# -- reading an expanded prompt back --

TAG = "co_tui"  # the metadata key of an attached file's TextContent


@dataclass(frozen=True)
class Attached:
    """A file a prompt carried: "file" or "note", its path, the text the model got."""

    kind: str
    path: str
    text: str


def attachment_of(item: TextContent) -> Attached | None:
    """The file a prompt's TextContent carries (from its metadata); None for any other."""
    meta: Any = item.metadata
    if not isinstance(meta, dict) or meta.get(TAG) != "attachment":
        return None
    kind, path = meta.get("kind"), meta.get("path")
    if kind not in ("file", "note") or not isinstance(path, str):
        return None
    return Attached(kind, path, item.content)


# A prompt stored as one text, before attached files were tagged: one block `_block` wrote,
# its kind, path, fence and text (the fence is longer than any run of backticks in the text,
# so the first fence like it ends the block).
_BLOCK = re.compile(
    r"\n\nattached (file|note): (.+?) \((?:1 line|[\d,]+ lines)(?:, the first [\d,]+ bytes)?\)\n"
    r"(`{3,})\n(.*?)\3(?=\n\n|\Z)",
    re.DOTALL,
)


def attached_blocks(prompt: str) -> list[Attached]:
    """The files a prompt stored as one text carries (for the egress guard: private)."""
    return [Attached(m[1], m[2], m[4]) for m in _BLOCK.finditer(prompt)]


def typed_text(prompt: str) -> str:
    """What the user typed, without the attached files (for a restored transcript)."""
    match = _BLOCK.search(prompt)
    return prompt if match is None else prompt[: match.start()]


def typed_prompt(content: str | Sequence[object]) -> str:
    """What the user typed of a prompt, one text or items (attached files left out)."""
    if isinstance(content, str):
        return typed_text(content)
    return "\n".join(item for item in content if isinstance(item, str))


# -- what can be mentioned (the picker's list) --


def workspace_files(workspace: Path, limit: int = MAX_CANDIDATES) -> list[str]:
    """The workspace's files: `git ls-files` (tracked and untracked, .gitignore obeyed) in a
    repository, else a walk that skips hidden and dependency folders; at most `limit`."""
    listed = _git_files(workspace, limit)
    if listed is not None:
        return listed
    return list(_walk(workspace, lambda name: True, limit))


def vault_notes(vault: Path | None, limit: int = MAX_CANDIDATES) -> list[str]:
    """The vault's notes (*.md), hidden folders (.obsidian, .trash) skipped."""
    if vault is None or not vault.is_dir():
        return []
    return list(_walk(vault, lambda name: name.endswith(".md"), limit))


def _git_files(workspace: Path, limit: int) -> list[str] | None:
    try:
        done = subprocess.run(
            [*GIT_SAFELY, "-C", str(workspace), *GIT_LS_FILES],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    names = [n for n in done.stdout.decode("utf-8", errors="replace").split("\0") if n]
    if not names:  # an empty repository, or a folder the repository ignores: walk it
        return None
    return sorted(dict.fromkeys(names))[:limit]


def _walk(root: Path, wanted: Callable[[str], bool], limit: int) -> Iterator[str]:
    def descend(name: str) -> bool:
        return not name.startswith(".") and name not in SKIPPED_FOLDERS

    count = 0
    try:
        for prefix, entries in walk_within(root, descend=descend):
            for entry in entries:
                if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                    continue
                if not wanted(entry.name):
                    continue
                yield prefix + entry.name
                count += 1
                if count >= limit:
                    return
    except ReadRefused:
        return
