"""The read-only classifier: every known way to make a "read-only" program write or run
something, or run until stopped, is refused with a reason naming it; ordinary read-only
commands stay automatic.

The writing and executing options below are this test's own list (from the programs'
manuals and the attacks found), not the classifier's tables.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from co_tui.config.settings import DEFAULT_SAFE_COMMANDS
from co_tui.policy.readonly import ReadOnlyVerdict, classify_read_only
from tests.sizes import examples


def verdict(cmd: str):
    return classify_read_only(cmd, DEFAULT_SAFE_COMMANDS)


# command -> what the reason must name
ATTACKS: dict[str, str] = {
    # the attacks found in the review
    "git diff --output=victim.txt": "`--output` makes git diff write a file",
    "tree -o README.md": "`-o` makes tree write a file",
    "git branch -D feature": "`-D` makes git branch delete a branch",
    "rg --pre rm . victim.txt": "`--pre` makes rg run",
    "rg --pre sh . s.sh": "`--pre` makes rg run",
    "git log -1 --format='#!/bin/sh%ntouch X%n' --output=s.sh": "`--output` makes git log",
    "git log -1 --format='%x3e%x3b' --output=s.sh": "`--output` makes git log write a file",
    "git -c core.fsmonitor='touch PWNED' status": "`-c` makes git set configuration",
    # other spellings
    "git diff --output victim.txt": "`--output`",
    "git diff --outp=victim.txt": "`--outp` (short for `--output`)",
    "git show --ou victim.txt": "`--ou` (short for `--output`)",
    "git diff --out''put=victim.txt": "`--output`",
    "git diff '--output'=victim.txt": "`--output`",
    "git diff -- --output=victim.txt": "`--output`",
    "git diff --ext-diff": "`--ext-diff` makes git diff run",
    "git log -p --ext-d": "`--ext-d` (short for `--ext-diff`)",
    "git diff --textconv": "`--textconv`",
    "git diff --tex": "`--tex` (short for `--textconv`)",
    "git show --show-signature": "`--show-signature` makes git show run gpg",
    "git log --format='%G?'": "makes git run gpg",
    "git -C /tmp log": "`-C` makes git run in another directory",
    "git --git-dir=/tmp/x log": "`--git-dir`",
    "git --work-tree=/tmp status": "`--work-tree`",
    "git --exec-path=/tmp log": "`--exec-path`",
    "git --config-env=core.pager=X log": "`--config-env`",
    "git -p log": "`-p` makes git run a pager",
    "git --no-pager -c core.pager=sh log": "`-c`",
    "tree -ofile": "`-o` (in `-ofile`) makes tree write a file",
    "tree -ao README.md": "`-o` (in `-ao`)",
    "tree -R -H . -L 2": "`-R` makes tree write 00Tree.html",
    "tree -H .": "`-H`",
    "rg --pre=sh foo": "`--pre`",
    "rg --pr=sh foo": "`--pr` (short for `--pre`)",
    "rg --pre-glob '*' --pre sh foo": "`--pre-glob`",
    "rg --hostname-bin=./s.sh foo": "`--hostname-bin`",
    "rg -z foo": "`-z` makes rg run decompression programs",
    "rg -iz foo": "`-z` (in `-iz`)",
    "rg --search-zip foo": "`--search-zip`",
    "rg -e --pre sh foo": "`--pre`",  # refused even where rg would read it as a pattern
    "rg foo *": "`*` is a glob",  # a file named --pre=sh would match
    "rg foo -*": "`-*` is a glob",
    "git log -- *": "`*` is a glob",
    "date -s 2020-01-01": "`-s` makes date set the clock",
    "date --set=2020-01-01": "`--set`",
    "date --se=2020-01-01": "`--se` (short for `--set`)",
    "date -us 2020-01-01": "`-s` (in `-us`)",
    "date 010100002030": "`010100002030` makes date set the clock",
    "date -Id 010100002030": "`010100002030`",  # -I takes `d` as its value
    "file -C -m magic": "`-C` makes file write a compiled magic file",
    "file --compile -m magic": "`--compile`",
    "file --comp -m magic": "`--comp` (short for `--compile`)",
    "file -m magic README.md": "`-m`",
    "file -bm magic README.md": "`-m` (in `-bm`)",
    "file -z archive.gz": "`-z` makes file run decompression programs",
    "file -S README.md": "`-S`",
    "git branch -d feature": "`-d` makes git branch delete a branch",
    "git branch --delete feature": "`--delete`",
    "git branch -m feature renamed": "`-m` makes git branch rename a branch",
    "git branch -c feature copy": "`-c` makes git branch copy a branch",
    "git branch -f feature HEAD": "`-f`",
    "git branch newbranch": "`newbranch` makes git branch create a branch",
    "git branch -v newbranch": "`newbranch`",  # -v does not make it list
    "git branch --sort -l newbranch": "`newbranch`",  # --sort takes -l as its value
    "git branch --lis newbranch": "`--lis` is not one of the read-only options",
    "git branch --edit-description": "`--edit-description` makes git branch open an editor",
    "git branch --set-upstream-to=origin/main": "`--set-upstream-to`",
    "git branch -u origin/main": "`-u`",
    "git branch --format='%(signature)'": "makes git run gpg",
    # one command line, and only one
    "ls; rm -rf x": "the command has a shell operator `;`",
    "ls && rm -rf x": "shell operator `&&`",
    "ls | sh": "shell operator `|`",
    "ls & rm x": "shell operator `&`",
    "cat a > b": "the command has a redirection `>`",
    "cat a >> b": "redirection `>>`",
    "cat < /etc/passwd": "redirection `<`",
    "ls 2>&1": "redirection `>&`",
    "grep 'a|b' README.md": "shell operator `|`",  # quoted, but refused all the same
    "echo $(id)": "`$` expansion",
    "echo $HOME": "`$` expansion",
    "echo `id`": "backtick",
    "ls\nrm -rf x": "line break",
    "ls\rrm -rf x": "line break",
    "cat 'README.md": "cannot be parsed",
    "cat README.md\\": "cannot be parsed",
    "cat a\x00b": "NUL",
    "ls {a,b}": "brace expansion in `{a,b}`",
    "rg {--pre=sh,foo} .": "brace expansion",
    "git log {1..3}": "brace expansion",
    "git branch newbranch #--list": "`#` comment",
    "ls (x)": "shell syntax `(`",
    # submodules have a configuration of their own, which the read-only view does not cover
    "git diff --ignore-submodules=none": "`--ignore-submodules` makes git diff look into",
    "git status --ignore-sub": "`--ignore-sub` (short for `--ignore-submodules`)",
    "git log -p --submodule=diff": "`--submodule` makes git log look into submodules",
    "git show --submodule": "`--submodule`",
}

SAFE: dict[str, str] = {
    "ls -la": "ls",
    "ls": "ls",
    "ls *.md": "ls",
    "ls\t-la": "ls",
    "cat README.md": "cat",
    "cat src/*.py": "cat",
    "head -n 5 README.md": "head",
    "tail -n 20 log.txt": "tail",
    "wc -l README.md": "wc",
    "pwd": "pwd",
    "echo hello": "echo",
    "grep -rn TODO src": "grep",
    "rg foo src": "rg",
    "rg -n TODO -g '*.py'": "rg",
    "rg 'foo.*bar' src/*.py": "rg",
    "rg --pretty foo": "rg",
    "date": "date",
    "date +%Y-%m-%d": "date",
    "date -u -d tomorrow +%s": "date",
    "date -d -1day +%s": "date",
    "whoami": "whoami",
    "uname -a": "uname",
    "tree -L 2": "tree",
    "tree -a src": "tree",
    "file README.md": "file",
    "file -b --mime-type README.md": "file",
    "stat -c %s README.md": "stat",
    "du -sh .": "du",
    "df -h": "df",
    "which python3": "which",
    "git status": "git status",
    "git status --short": "git status",
    "git log --oneline -5": "git log",
    "git log -p -1 -- src": "git log",
    "git log --format='%h %s' -3": "git log",
    "git --no-pager log -1": "git log",
    "git diff HEAD~1": "git diff",
    "git diff --stat": "git diff",
    "git diff --text HEAD~1": "git diff",  # a real option, not short for --textconv
    "git diff --no-ext-diff --no-textconv": "git diff",
    "git diff -C -M HEAD~1": "git diff",  # copy and rename detection, not git's global -C
    "git -P diff --cached": "git diff",
    "git diff HEAD@{1}..HEAD": "git diff",
    "git show HEAD": "git show",
    "git show HEAD@{1}": "git show",
    "git branch": "git branch",
    "git branch -a": "git branch",
    "git branch -avv": "git branch",
    "git branch --list 'feat*'": "git branch",
    "git branch --contains HEAD": "git branch",
    "git branch --merged main": "git branch",
    "git branch --sort=-committerdate": "git branch",
    "git branch --format '%(refname:short)'": "git branch",
    "git branch --show-current": "git branch",
}

NOT_READ_ONLY = [
    "rm -rf /",
    "git push",
    "git",
    "lsblk",
    "find . -delete",
    "'ls' -la",
    "/bin/ls",
    "ls'x'",
    "X=1 ls",
    "",
    "   ",
]


# Commands that run until stopped (they would take the whole time limit of an auto-approved
# command): refused, the reason naming the option or the program. With these programs listed.
FOLLOWING_LISTED = [*DEFAULT_SAFE_COMMANDS, "journalctl", "watch", "less", "docker logs"]
FOLLOWING_LISTED += ["kubectl", "podman"]
FOLLOWING: dict[str, str] = {
    "tail -f app.log": "`-f` makes tail wait for new lines until stopped",
    "tail -F app.log": "`-F` makes tail wait",
    "tail --follow app.log": "`--follow` makes tail wait",
    "tail --follow=name app.log": "`--follow` makes tail wait",
    "tail --fol app.log": "`--fol` (short for `--follow`)",
    "tail --pid=42 app.log": "`--pid` makes tail wait until a process ends",
    "tail --pid 42 app.log": "`--pid`",
    "tail -fn20 app.log": "`-f` (in `-fn20`)",
    "tail -n5 -f app.log": "`-f` makes tail wait",
    "tail -n 5 -qF a.log b.log": "`-F` (in `-qF`)",
    "tail -5f app.log": "`-f` (in `-5f`)",
    "tail +5f app.log": "`+5f` makes tail wait",
    "tail -- -f": "`-f`",
    "tail *.log": "`*.log` is a glob that may expand to a file name tail reads as an option",
    "watch ls": "`watch` runs its command again and again until stopped",
    "watch -n1 git status": "`watch` runs",
    "journalctl -f": "`-f` makes journalctl wait for new lines",
    "journalctl -u nginx --follow": "`--follow` makes journalctl wait",
    "less +F app.log": "`less` is a pager",
    "less app.log": "`less` is a pager",
    "docker logs -f web": "`-f` makes docker logs wait for new lines",
    "docker logs --follow web": "`--follow` makes docker logs wait",
    "docker logs -tf web": "`-f` (in `-tf`) makes docker logs wait",
    "kubectl logs -f pod/web": "`-f` makes kubectl logs wait",
    "kubectl -n prod logs --follow=true web": "`--follow` makes kubectl logs wait",
    "podman logs --follow web": "`--follow` makes podman logs wait",
}


@pytest.mark.parametrize("cmd", list(FOLLOWING))
def test_a_command_that_runs_until_stopped_is_refused_with_a_reason(cmd: str) -> None:
    result = classify_read_only(cmd, FOLLOWING_LISTED)
    assert not result.safe
    assert FOLLOWING[cmd] in result.reason


@pytest.mark.parametrize("cmd", list(ATTACKS))
def test_attack_is_refused_and_the_reason_names_it(cmd: str) -> None:
    result = verdict(cmd)
    assert not result.safe
    assert ATTACKS[cmd] in result.reason


@pytest.mark.parametrize("cmd", list(SAFE))
def test_read_only_command_stays_automatic(cmd: str) -> None:
    assert verdict(cmd) == ReadOnlyVerdict(True, f"read-only command ({SAFE[cmd]})")


@pytest.mark.parametrize("cmd", NOT_READ_ONLY)
def test_a_program_that_is_not_read_only_has_no_reason(cmd: str) -> None:
    assert verdict(cmd) == ReadOnlyVerdict(False, "")


def test_configured_entries_are_matched_by_program_and_subcommand() -> None:
    assert classify_read_only("npm ls --all", ["npm ls"]).safe
    assert classify_read_only("npm install", ["npm ls"]) == ReadOnlyVerdict(False, "")
    assert classify_read_only("git stash list", ["git stash list"]).safe
    assert classify_read_only("git stash drop", ["git stash list"]) == ReadOnlyVerdict(False, "")
    assert classify_read_only("git log", ["git status"]) == ReadOnlyVerdict(False, "")
    assert classify_read_only("npm ls; rm x", ["npm ls"]).reason == (
        "the command has a shell operator `;`"
    )


# -- the property -------------------------------------------------------------------------

# Options that make the program write, delete, or run another program (or look into
# submodules, whose configuration can name programs).
WRITING: dict[str, list[str]] = {
    "git status": ["--output", "--ignore-submodules"],
    "git log": ["--output", "--ext-diff", "--textconv", "--show-signature", "--submodule"],
    "git diff": ["--output", "--ext-diff", "--textconv", "--ignore-submodules", "--submodule"],
    "git show": ["--output", "--ext-diff", "--textconv", "--show-signature", "--submodule"],
    "git branch": [
        "-d",
        "-D",
        "--delete",
        "-m",
        "-M",
        "--move",
        "-c",
        "-C",
        "--copy",
        "-f",
        "--force",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "-t",
        "--track",
    ],
    "rg": ["--pre", "--pre-glob", "--hostname-bin", "--search-zip", "-z"],
    "tree": ["-o", "-R", "-H"],
    "file": ["-C", "--compile", "-m", "--magic-file", "-z", "-Z", "--uncompress"],
    "date": ["-s", "--set"],
}
GIT_GLOBALS = [
    "-c core.pager=sh",
    "-C /tmp",
    "--git-dir=/tmp/x",
    "--work-tree=/tmp",
    "--exec-path=/tmp",
    "--config-env=core.pager=X",
    "-p",
    "--paginate",
]
# Real options that read like abbreviations of a writing one.
REAL_OPTIONS = {"--text"}
# Arguments each program takes without writing anything (letters: its harmless short options).
ORDINARY: dict[str, list[str]] = {
    "ls": ["-la", "src", "-1", "--color=never", "*.md"],
    "cat": ["-n", "README.md", "src/*.py"],
    "head": ["-n", "5", "README.md"],
    "tail": ["-n", "5", "README.md"],
    "wc": ["-l", "README.md"],
    "pwd": ["-P"],
    "echo": ["hello", "-n", "'a b'"],
    "grep": ["-rn", "TODO", "src", "-e", "'a.*b'"],
    "rg": ["-n", "TODO", "src", "-g", "'*.py'", "--type", "py", "-i", "--pretty", "--"],
    "date": ["-u", "+%s", "-R", "--iso-8601=seconds", "--date=tomorrow", "-dtomorrow"],
    "whoami": [],
    "uname": ["-a", "-r"],
    "tree": ["-a", "-L", "2", "src", "-d", "--noreport"],
    "file": ["-b", "README.md", "--mime-type", "-L"],
    "stat": ["-c", "%s", "README.md"],
    "du": ["-sh", "."],
    "df": ["-h"],
    "which": ["python3"],
    "git status": ["--short", "-b", "--porcelain"],
    "git log": ["--oneline", "-5", "-p", "HEAD~1", "--stat", "--format=%h", "--", "src", "-C"],
    "git diff": ["HEAD~1", "--stat", "--name-only", "--text", "-C", "--cached", "--no-ext-diff"],
    "git show": ["HEAD", "--stat", "-s", "--format=%s"],
    "git branch": ["-a", "-r", "-v", "--sort=-committerdate", "--no-color", "--show-current"],
}
HARMLESS_LETTERS = {"rg": "inw", "tree": "adf", "file": "bLk", "date": "uR", "git branch": "arv"}
OPERATORS = [
    "; rm -rf x",
    "| sh",
    "> out",
    ">> out",
    "&& touch x",
    "|| touch x",
    "& x",
    "$(id)",
    "`id`",
    "\nid",
    "< /etc/passwd",
    "2>&1",
    ";",
    "|",
]
values = st.sampled_from(["victim.txt", "sh", "x"])


@st.composite
def long_spelling(draw: st.DrawFn, option: str) -> str:
    """`--output=x`, `--output x`, `--outp=x`, `--out''put x`, `'--output'=x`, …"""
    name = option
    prefixes = [option[:n] for n in range(3, len(option)) if option[:n] not in REAL_OPTIONS]
    if prefixes and draw(st.booleans()):
        name = draw(st.sampled_from(prefixes))
    if draw(st.booleans()):
        cut = draw(st.integers(1, len(name) - 1))
        name = f"{name[:cut]}''{name[cut:]}"
    elif draw(st.booleans()):
        name = f"'{name}'"
    value = draw(values)
    return draw(st.sampled_from([name, f"{name}={value}", f"{name} {value}"]))


@st.composite
def short_spelling(draw: st.DrawFn, option: str, harmless: str) -> str:
    """`-o`, `-o x`, `-ox`, `-ao`, `-oa`, `'-o'`, …"""
    letter = option[1]
    others = draw(st.text(alphabet=harmless, max_size=3)) if harmless else ""
    cut = draw(st.integers(0, len(others)))
    bundle = f"-{others[:cut]}{letter}{others[cut:]}"
    value = draw(values)
    spelled = draw(st.sampled_from([bundle, f"{bundle} {value}", f"{bundle}{value}"]))
    return f"'{spelled}'" if draw(st.booleans()) and " " not in spelled else spelled


def dangerous(program: str, operators: bool) -> st.SearchStrategy[str]:
    options = WRITING.get(program, [])
    harmless = HARMLESS_LETTERS.get(program, "")
    choices = [st.sampled_from(OPERATORS)] if operators else []
    choices += [long_spelling(o) for o in options if o.startswith("--")]
    choices += [short_spelling(o, harmless) for o in options if not o.startswith("--")]
    return st.one_of(choices)


@st.composite
def commands(draw: st.DrawFn, programs: list[str], operators: bool) -> tuple[str, bool]:
    """(a command from one of `programs` with ordinary arguments, maybe writing options (and
    operators) mixed in; whether it has one)"""
    program = draw(st.sampled_from(programs))
    ordinary = ORDINARY[program]
    items = [(word, False) for word in draw(st.lists(st.sampled_from(ordinary or [""])))]
    bad = draw(st.lists(dangerous(program, operators), max_size=3))
    items += [(word, True) for word in bad]
    items = draw(st.permutations(items))
    head = program.split()
    has_bad = bool(bad)
    if program.startswith("git ") and draw(st.booleans()):
        head.insert(1, draw(st.sampled_from(GIT_GLOBALS)))
        has_bad = True
    return " ".join([*head, *(w for w, _ in items if w)]), has_bad


def test_every_default_program_has_ordinary_arguments_here() -> None:
    assert set(ORDINARY) == set(DEFAULT_SAFE_COMMANDS)


def check(cmd: str, has_bad: bool) -> None:
    result = verdict(cmd)
    if has_bad:
        assert not result.safe, cmd
        assert result.reason, cmd  # a listed program: the user is told why
    else:
        assert result.safe, (cmd, result.reason)


@pytest.mark.slow
@settings(max_examples=examples(1500), deadline=None)
@given(case=commands(DEFAULT_SAFE_COMMANDS, operators=True))
def test_a_writing_option_or_an_operator_is_never_safe(case: tuple[str, bool]) -> None:
    check(*case)


@pytest.mark.slow
@settings(max_examples=examples(1500), deadline=None)
@given(case=commands(list(WRITING), operators=False))
def test_a_writing_option_in_any_spelling_is_never_safe(case: tuple[str, bool]) -> None:
    check(*case)
