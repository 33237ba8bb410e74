"""Which shell commands may run without asking: the argument-aware read-only classifier.

A command is read-only when it is one plain command line (no shell operator, redirection,
`$`, backtick, newline, comment, parenthesis or brace expansion), its program (for git:
program and subcommand) is in `shell_safe_commands`, and none of its arguments is an option
that makes that program write, delete or run something, in any spelling: `--opt=x`,
`--opt x`, an abbreviation, a bundle of short options, a glob that could expand to one.

A command that runs until stopped is refused too: `tail -f` in any spelling, `journalctl -f`,
`docker|podman|kubectl logs -f`, `watch`, `less` (what it accepts runs for 30 s at most).

This is the second layer: what it accepts also runs in a read-only, network-less view of
the workspace (approvals.py). Where it cannot tell, it refuses, and the user is asked.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ReadOnlyVerdict:
    safe: bool
    # Safe: what makes it so. Unsafe: why not, naming the option or operator; "" when the
    # program is simply not a read-only one (nothing worth telling the user).
    reason: str


NOT_READ_ONLY = ReadOnlyVerdict(False, "")

_LEADING_WORD = re.compile(r"[^\s;&|<>()`$'\"\\]*")
_OPERATOR_RUN = re.compile(r"[;&|<>]+")
_GLOB_CHARS = frozenset("*?[")


# -- the command line -------------------------------------------------------------------


def _text_problem(cmd: str) -> str | None:
    """What, anywhere in the text (quoted or not), makes the line more than one command."""
    if "\x00" in cmd:
        return "the command has a NUL byte"
    if "\n" in cmd or "\r" in cmd:
        return "the command has a line break (a second command)"
    if "$" in cmd:
        return "`$` expansion"
    if "`" in cmd:
        return "backtick command substitution"
    if match := _OPERATOR_RUN.search(cmd):
        op = match.group()
        kind = "a redirection" if "<" in op or ">" in op else "a shell operator"
        return f"the command has {kind} `{op}`"
    return None


@dataclass(frozen=True)
class _Word:
    """One shell word: its text, and per character whether it stood outside quotes (where
    the shell expands globs and braces and reads `#` and parentheses)."""

    text: str
    bare: tuple[bool, ...]


def _scan_words(cmd: str) -> list[_Word]:
    """Split like POSIX sh does for a line without `$`, backticks or line breaks (refused
    before this runs). Raises ValueError on an unclosed quote or a trailing backslash."""
    words: list[_Word] = []
    text: list[str] = []
    bare: list[bool] = []
    in_word = False
    i = 0

    def add(chars: str, unquoted: bool) -> None:
        text.extend(chars)
        bare.extend([unquoted] * len(chars))

    while i < len(cmd):
        ch = cmd[i]
        if ch in " \t":
            if in_word:
                words.append(_Word("".join(text), tuple(bare)))
                text.clear()
                bare.clear()
                in_word = False
            i += 1
            continue
        in_word = True
        if ch == "'":
            end = cmd.index("'", i + 1)  # ValueError when unclosed
            add(cmd[i + 1 : end], False)
            i = end + 1
        elif ch == '"':
            i += 1
            while True:
                if i >= len(cmd):
                    raise ValueError("unclosed double quote")
                if cmd[i] == '"':
                    i += 1
                    break
                if cmd[i] == "\\" and cmd[i + 1 : i + 2] in ("\\", '"'):
                    add(cmd[i + 1], False)
                    i += 2
                else:
                    add(cmd[i], False)
                    i += 1
        elif ch == "\\":
            if i + 1 >= len(cmd):
                raise ValueError("trailing backslash")
            add(cmd[i + 1], False)
            i += 2
        else:
            add(ch, True)
            i += 1
    if in_word:
        words.append(_Word("".join(text), tuple(bare)))
    return words


def _has_brace_expansion(word: _Word) -> bool:
    """bash (which /bin/sh is on some systems) turns `{a,b}` and `{1..3}` into several words."""
    opened: list[int] = []
    for i, ch in enumerate(word.text):
        if not word.bare[i]:
            continue
        if ch == "{":
            opened.append(i)
        elif ch == "}" and opened:
            inner = word.text[opened.pop() + 1 : i]
            if "," in inner or ".." in inner:
                return True
    return False


def _syntax_problem(words: Sequence[_Word]) -> str | None:
    for word in words:
        if word.text.startswith("#") and word.bare[0]:
            return "the command has a `#` comment"
        for ch, unquoted in zip(word.text, word.bare, strict=True):
            if unquoted and ch in "()":
                return f"the command has shell syntax `{ch}`"
        if _has_brace_expansion(word):
            return f"brace expansion in `{word.text}`"
    return None


def _glob_problem(word: _Word, label: str) -> str | None:
    """A glob whose expansion may start with `-` can become an option (a file named
    `--pre=sh` matches `*`): refused for programs that have dangerous options."""
    first_glob = next(
        (i for i, ch in enumerate(word.text) if word.bare[i] and ch in _GLOB_CHARS), None
    )
    if first_glob is None:
        return None
    if first_glob == 0 or word.text.startswith("-"):
        return f"`{word.text}` is a glob that may expand to a file name {label} reads as an option"
    return None


# -- per-program rules ------------------------------------------------------------------


def _spellings(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class _Rules:
    """What a program's arguments may be. Options are spelled with their dashes."""

    # Options that make the program write, delete or run something -> what they make it do.
    refused: Mapping[str, str] = field(default_factory=dict)
    # Real long options that read like abbreviations of a refused one (git `--text`).
    real_options: frozenset[str] = frozenset()
    # An allow-list: any other option is refused. None: everything not refused is allowed.
    allowed: frozenset[str] | None = None
    # Options that take the next word as their value when none is attached (as getopt does).
    takes_value: frozenset[str] = frozenset()
    # Short options whose value can only be attached (`-Iseconds`).
    optional_value: frozenset[str] = frozenset()
    # A check on the operands (the non-option words), given the options seen.
    operands: Callable[[list[str], set[str]], str | None] | None = None
    # A check on every argument's text.
    each_word: Callable[[str], str | None] | None = None


def _date_operands(operands: list[str], _seen: set[str]) -> str | None:
    for operand in operands:
        if not operand.startswith("+"):
            return f"`{operand}` makes date set the clock (a format starts with `+`)"
    return None


_BRANCH_LIST_MODE = frozenset(
    {"--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
)


def _branch_operands(operands: list[str], seen: set[str]) -> str | None:
    if operands and not seen & _BRANCH_LIST_MODE:
        return f"`{operands[0]}` makes git branch create a branch (to list, add `--list`)"
    return None


def _gpg_placeholder(word: str) -> str | None:
    if "%G" in word or "%(signature" in word:
        return f"the signature placeholder in `{word}` makes git run gpg"
    return None


_GIT_REFUSED = {
    "--output": "write a file",
    "--ext-diff": "run an external diff program",
    "--textconv": "run text conversion programs",
    "--show-signature": "run gpg",
    "--exec-path": "run its helper programs from another directory",
    "--git-dir": "use another repository",
    "--work-tree": "use another work tree",
    "--config-env": "take configuration, which can run programs, from the environment",
    "--ignore-submodules": "look into submodules (the read-only view ignores them), whose own "
    "configuration can run programs",
    "--submodule": "look into submodules, whose own configuration can run programs",
}
_GIT = _Rules(_GIT_REFUSED, real_options=frozenset({"--text"}), each_word=_gpg_placeholder)

_GIT_BRANCH = _Rules(
    refused={
        **_GIT_REFUSED,
        **dict.fromkeys(("-d", "-D", "--delete"), "delete a branch"),
        **dict.fromkeys(("-m", "-M", "--move"), "rename a branch"),
        **dict.fromkeys(("-c", "-C", "--copy"), "copy a branch"),
        **dict.fromkeys(("-f", "--force"), "overwrite a branch"),
        **dict.fromkeys(("-t", "--track", "--no-track", "--create-reflog"), "create a branch"),
        **dict.fromkeys(
            ("-u", "--set-upstream-to", "--unset-upstream"), "change a branch's upstream"
        ),
        "--edit-description": "open an editor",
        "--recurse-submodules": "create branches in submodules",
    },
    allowed=_spellings(
        "-a --all -r --remotes -l --list -v --verbose -i --ignore-case --show-current"
        " --sort --format --points-at --contains --no-contains --merged --no-merged"
        " --omit-empty --color --no-color --column --no-column --abbrev --no-abbrev"
    ),
    takes_value=frozenset({"--sort", "--format", "--points-at"}),
    operands=_branch_operands,
    each_word=_gpg_placeholder,
)

_DECOMPRESS = "run decompression programs"

# Programs absent here take any argument: ls, cat, head, tail, wc, pwd, echo, grep, whoami,
# uname, stat, du, df, which have no option that writes or runs anything.
_RULES: dict[str, _Rules] = {
    "git": _GIT,
    "git branch": _GIT_BRANCH,
    "rg": _Rules(
        {
            "--pre": "run the program it names on every file",
            "--pre-glob": "run the `--pre` program",
            "--hostname-bin": "run the program it names",
            "--search-zip": _DECOMPRESS,
            "-z": _DECOMPRESS,
        }
    ),
    "date": _Rules(
        dict.fromkeys(("-s", "--set"), "set the clock"),
        takes_value=frozenset({"-d", "-f", "-r", "--date", "--file", "--reference", "--rfc-3339"}),
        optional_value=frozenset({"-I"}),
        operands=_date_operands,
    ),
    "file": _Rules(
        {
            **dict.fromkeys(("-C", "--compile"), "write a compiled magic file"),
            **dict.fromkeys(("-m", "--magic-file"), "load rules from another magic file"),
            **dict.fromkeys(("-z", "-Z", "--uncompress", "--uncompress-noreport"), _DECOMPRESS),
            **dict.fromkeys(("-S", "--no-sandbox"), "turn off its own sandbox"),
        }
    ),
    "tree": _Rules(
        {
            **dict.fromkeys(("-o", "--output"), "write a file"),
            "-R": "write 00Tree.html into every directory",
            "-H": "write HTML pages (with -R, into every directory)",
        }
    ),
}


# -- commands that run until stopped ----------------------------------------------------

_FOLLOWS = "wait for new lines until stopped"
_OBSOLETE_TAIL = re.compile(r"[+-]\d*[bcl]?[fF]")


def _obsolete_tail_follow(word: str) -> str | None:
    """`tail -5f` and `tail +5f`: the old spelling of -n (or -c) with -f."""
    if _OBSOLETE_TAIL.fullmatch(word):
        return f"`{word}` makes tail {_FOLLOWS}"
    return None


_FOLLOWING: dict[str, _Rules] = {
    "tail": _Rules(
        {
            **dict.fromkeys(("-f", "-F", "--follow"), _FOLLOWS),
            "--pid": "wait until a process ends",
        },
        each_word=_obsolete_tail_follow,
    ),
    "journalctl": _Rules(dict.fromkeys(("-f", "--follow"), _FOLLOWS)),
    **{
        f"{program} logs": _Rules(dict.fromkeys(("-f", "--follow"), _FOLLOWS))
        for program in ("docker", "podman", "kubectl")
    },
}
_NEVER_ENDS = {
    "watch": "runs its command again and again until stopped",
    "less": "is a pager: it waits for keys (and `+F` follows the file)",
}


def _until_stopped_problem(program: str, args: Sequence[_Word]) -> str | None:
    """Why a command would run until stopped (it then runs for the whole time limit)."""
    if program in _NEVER_ENDS:
        return f"`{program}` {_NEVER_ENDS[program]}"
    label = program
    if f"{program} logs" in _FOLLOWING and any(word.text == "logs" for word in args):
        label = f"{program} logs"
    rules = _FOLLOWING.get(label)
    return _arguments_problem(rules, args, label) if rules is not None else None


def _option_problem(rules: _Rules, word: str, label: str) -> str | None:
    """Whether `word`, read as an option (or a bundle of them), is refused for `label`."""
    if word.startswith("--"):
        name = word.partition("=")[0]
        if name in rules.refused:
            return f"`{name}` makes {label} {rules.refused[name]}"
        if name not in rules.real_options and len(name) > 2:
            for refused, effect in rules.refused.items():
                if refused.startswith(name):  # getopt and git accept unambiguous prefixes
                    return f"`{name}` (short for `{refused}`) makes {label} {effect}"
        if rules.allowed is not None and name not in rules.allowed:
            return f"`{name}` is not one of the read-only options of {label}"
        return None
    for letter in word[1:]:
        option = f"-{letter}"
        where = "" if len(word) == 2 else f" (in `{word}`)"
        if option in rules.refused:
            return f"`{option}`{where} makes {label} {rules.refused[option]}"
        if rules.allowed is not None and option not in rules.allowed:
            return f"`{option}`{where} is not one of the read-only options of {label}"
    return None


def _operands(rules: _Rules, words: Sequence[str]) -> tuple[list[str], set[str]]:
    """Operands and the options seen, reading the words as getopt and git do."""
    operands: list[str] = []
    seen: set[str] = set()
    i = 0
    ended = False
    while i < len(words):
        word = words[i]
        i += 1
        if ended or word == "-" or not word.startswith("-"):
            operands.append(word)
        elif word == "--":
            ended = True
        elif word.startswith("--"):
            name, eq, _ = word.partition("=")
            seen.add(name)
            if not eq and name in rules.takes_value:
                i += 1
        else:
            for at, letter in enumerate(word[1:], start=2):
                option = f"-{letter}"
                seen.add(option)
                if option in rules.optional_value:
                    break
                if option in rules.takes_value:
                    if at == len(word):
                        i += 1
                    break
    return operands, seen


def _arguments_problem(rules: _Rules, args: Sequence[_Word], label: str) -> str | None:
    # Every word that looks like an option is checked, also values and words after `--`:
    # reading more as options than the program does can only refuse more.
    for word in args:
        if problem := _glob_problem(word, label):
            return problem
        text = word.text
        is_option = text.startswith("-") and text not in ("-", "--")
        if is_option and (problem := _option_problem(rules, text, label)):
            return problem
        if rules.each_word is not None and (problem := rules.each_word(text)):
            return problem
    if rules.operands is not None:
        operands, seen = _operands(rules, [w.text for w in args])
        return rules.operands(operands, seen)
    return None


# -- git's options before the subcommand ------------------------------------------------

_GIT_HARMLESS_GLOBALS = _spellings(
    "--no-pager -P --no-optional-locks --no-replace-objects --literal-pathspecs"
    " --glob-pathspecs --noglob-pathspecs --icase-pathspecs"
)
_GIT_GLOBAL_EFFECTS = {
    "-c": "set configuration, which can run programs",
    "--config-env": "set configuration, which can run programs",
    "-C": "run in another directory",
    "--git-dir": "use another repository",
    "--work-tree": "use another work tree",
    "--exec-path": "run its helper programs from another directory",
    "-p": "run a pager",
    "--paginate": "run a pager",
}


def _git_global_problem(word: str) -> str | None:
    if word in _GIT_HARMLESS_GLOBALS:
        return None
    name = word.partition("=")[0] if word.startswith("--") else word[:2]
    if name in _GIT_GLOBAL_EFFECTS:
        return f"`{name}` makes git {_GIT_GLOBAL_EFFECTS[name]}"
    return f"`{word}` before the subcommand is not one of git's harmless options"


# -- the classifier ---------------------------------------------------------------------


def _match_entry(
    texts: Sequence[str], entries: Sequence[tuple[str, ...]], start: int
) -> tuple[str, ...] | None:
    """The longest entry whose words after the program are `texts[start:...]`."""
    best: tuple[str, ...] | None = None
    for entry in entries:
        if entry[0] != texts[0] or tuple(texts[start : start + len(entry) - 1]) != entry[1:]:
            continue
        if best is None or len(entry) > len(best):
            best = entry
    return best


def classify_read_only(cmd: str, safe_commands: Sequence[str]) -> ReadOnlyVerdict:
    """Whether `cmd` may run without asking (in a read-only view of the workspace), and why."""
    entries = [tuple(e.split()) for e in safe_commands if e.split()]
    head = _LEADING_WORD.match(cmd.lstrip(" \t"))
    program = head.group() if head else ""
    if not program or program not in {e[0] for e in entries}:
        return NOT_READ_ONLY
    if problem := _text_problem(cmd):
        return ReadOnlyVerdict(False, problem)
    try:
        words = _scan_words(cmd)
        posix_words = shlex.split(cmd, posix=True)
    except ValueError:
        return ReadOnlyVerdict(False, "the command cannot be parsed (an unclosed quote?)")
    texts = [w.text for w in words]
    if texts != posix_words:
        return ReadOnlyVerdict(False, "the command's quoting is ambiguous")
    if texts[0] != program:  # e.g. ls'x': another program
        return NOT_READ_ONLY
    if problem := _syntax_problem(words):
        return ReadOnlyVerdict(False, problem)

    start = 1
    if program == "git":
        while start < len(texts) and texts[start].startswith("-"):
            if problem := _git_global_problem(texts[start]):
                return ReadOnlyVerdict(False, problem)
            start += 1
    entry = _match_entry(texts, entries, start)
    if entry is None:
        return NOT_READ_ONLY
    consumed = len(entry) - 1  # the entry's words after the program
    rules: _Rules | None
    if program == "git":
        subcommand = texts[start] if start < len(texts) else ""
        consumed = max(consumed, 1 if subcommand else 0)
        label = f"git {subcommand}".strip()
        rules = _RULES.get(label, _GIT)
    else:
        label = program
        rules = _RULES.get(program)
    args = words[start + consumed :]
    if rules is not None and (problem := _arguments_problem(rules, args, label)):
        return ReadOnlyVerdict(False, problem)
    if problem := _until_stopped_problem(program, words[1:]):
        return ReadOnlyVerdict(False, problem)
    return ReadOnlyVerdict(True, f"read-only command ({' '.join(entry)})")
