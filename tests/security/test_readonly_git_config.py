"""git in the read-only view runs no program the repository names: its .git/config (and
config.worktree) is covered with /dev/null, so diff.external, textconv and clean filter
drivers and include.path are never read; a .git that cannot be covered so (a file, a link, a
linked or FIFO config, a commondir) hides the repository from git instead; submodules, whose
configuration is their own, are not looked into. Real git, real Docker, real bubblewrap;
the workspace belongs to a regular uid, as a user's checkout does.

Each hostile setting is shown to run its program outside the read-only view first.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.conftest import make_sandbox
from tests.security.hostile import OWNER_UID, build_hostile_repo, chown_tree, git

BACKENDS = [
    pytest.param("docker", marks=pytest.mark.docker),
    pytest.param("bwrap", marks=pytest.mark.bwrap),
]
HOOK = "#!/bin/sh\necho HOOK-RAN >&2\ntouch /tmp/hook-ran\nexec cat\n"
# Appended to a command: whether the hook ran (its file in the sandbox's /tmp) shows in the
# output too.
RAN = "; test -e /tmp/hook-ran && echo HOOK-LEFT-A-FILE; true"
HIDDEN = "not a git repository"

DIFF_EXTERNAL = "[diff]\n\texternal = /workspace/hook.sh\n"
TEXTCONV = '[diff "hostile"]\n\ttextconv = /workspace/hook.sh\n'
CLEAN_FILTER = '[filter "hostile"]\n\tclean = /workspace/hook.sh\n'
INCLUDE = "[include]\n\tpath = ../hostile.cfg\n"  # relative to .git: the workspace's root
WORKTREE_CONFIG = "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n"


def add_hostile_files(repo: Path) -> None:
    """The hook, attributes that send every .txt through the `hostile` drivers, and a
    committed notes.txt (`git show` and `git log -p` show it; `git status` hashes it again
    once its owner changed)."""
    (repo / "notes.txt").write_text("notes\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "notes")
    hook = repo / "hook.sh"
    hook.write_text(HOOK)
    hook.chmod(0o755)
    (repo / ".gitattributes").write_text("*.txt diff=hostile filter=hostile\n")
    (repo / "hostile.cfg").write_text(DIFF_EXTERNAL)


@contextmanager
def hostile_repo(config: str = "", layout: Callable[[Path], None] | None = None) -> Iterator[Path]:
    """The hostile repository with `config` added to its .git/config, `layout` applied."""
    repo = Path(tempfile.mkdtemp(prefix="co-gitcfg-", dir="/tmp"))
    repo.chmod(0o755)
    try:
        build_hostile_repo(repo)
        add_hostile_files(repo)
        with (repo / ".git" / "config").open("a") as file:
            file.write(config)
        if layout is not None:
            layout(repo)
        if os.geteuid() == 0:
            chown_tree(repo, OWNER_UID)
        yield repo
    finally:
        shutil.rmtree(repo, ignore_errors=True)


@asynccontextmanager
async def sandbox_in(kind: str, repo: Path, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    box = make_sandbox(kind, repo, request)
    try:
        yield box
    finally:
        await box.cleanup()


def hook_ran(output: str) -> bool:
    return "HOOK-RAN" in output or "HOOK-LEFT-A-FILE" in output


@pytest.mark.parametrize("kind", BACKENDS)
async def test_git_reads_work_and_read_no_repository_config(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with hostile_repo() as repo:
        async with sandbox_in(kind, repo, request) as box:
            results = {
                cmd: await box.run_command(cmd, timeout=30, read_only=True)
                for cmd in (
                    "git status --short",
                    "git diff",
                    "git log -p -2",
                    "git show HEAD",
                    "git branch",
                    "git config --local --list",
                )
            }
    failed = {cmd: r.output for cmd, r in results.items() if r.exit_code not in (0, 1)}
    assert failed == {}
    assert " M victim.txt" in results["git status --short"].output
    assert "+precious data, changed" in results["git diff"].output
    assert (
        "+notes" in results["git log -p -2"].output and "initial" in results["git log -p -2"].output
    )
    assert "+notes" in results["git show HEAD"].output
    assert "* main" in results["git branch"].output and "feature" in results["git branch"].output
    assert results["git config --local --list"].output == ""  # .git/config is not read


# (what the repository's configuration names, the git command that would run it)
HOSTILE_SETTINGS = [
    pytest.param(DIFF_EXTERNAL, "git diff", id="diff.external-git-diff"),
    pytest.param(TEXTCONV, "git diff", id="textconv-git-diff"),
    pytest.param(TEXTCONV, "git log -p -2", id="textconv-git-log-p"),
    pytest.param(TEXTCONV, "git show HEAD", id="textconv-git-show"),
    pytest.param(CLEAN_FILTER, "git status --short", id="clean-filter-git-status"),
    pytest.param(CLEAN_FILTER, "git diff", id="clean-filter-git-diff"),
    pytest.param(INCLUDE, "git diff", id="include.path-git-diff"),
]


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize(("config", "cmd"), HOSTILE_SETTINGS)
async def test_a_program_the_repository_config_names_never_runs(
    kind: str, config: str, cmd: str, request: pytest.FixtureRequest
) -> None:
    with hostile_repo(config) as repo:
        async with sandbox_in(kind, repo, request) as box:
            read_only = await box.run_command(cmd + RAN, timeout=30, read_only=True)
            unguarded = await box.run_command(cmd + RAN, timeout=30)
    assert hook_ran(unguarded.output), f"the setting runs nothing even unguarded: {unguarded}"
    assert not hook_ran(read_only.output), read_only.output
    assert HIDDEN not in read_only.output  # git worked, without the repository's config


def worktree_config(repo: Path) -> None:
    (repo / ".git" / "config.worktree").write_text(DIFF_EXTERNAL)


def config_is_a_link(repo: Path) -> None:
    git_dir = repo / ".git"
    (git_dir / "config").rename(git_dir / "real-config")
    (git_dir / "config").symlink_to("real-config")


def git_dir_is_a_file(repo: Path) -> None:
    (repo / ".git").rename(repo / ".hidden-git")
    (repo / ".git").write_text("gitdir: .hidden-git\n")


def git_dir_is_a_link(repo: Path) -> None:
    (repo / ".git").rename(repo / ".hidden-git")
    (repo / ".git").symlink_to(".hidden-git")


def commondir(repo: Path) -> None:
    """A plain .git whose `commondir` sends git to another directory's config (and refs)."""
    (repo / ".git").rename(repo / ".hidden-git")
    (repo / ".git").mkdir()
    for name in ("HEAD", "index"):
        shutil.copy2(repo / ".hidden-git" / name, repo / ".git" / name)
    (repo / ".git" / "commondir").write_text("../.hidden-git\n")


def config_is_a_fifo(repo: Path) -> None:
    (repo / ".git" / "config").rename(repo / ".git" / "real-config")
    os.mkfifo(repo / ".git" / "config")


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_config_worktree_names_no_program_either(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with hostile_repo(WORKTREE_CONFIG, worktree_config) as repo:
        async with sandbox_in(kind, repo, request) as box:
            read_only = await box.run_command("git diff" + RAN, timeout=30, read_only=True)
            unguarded = await box.run_command("git diff" + RAN, timeout=30)
    assert hook_ran(unguarded.output), unguarded.output
    assert not hook_ran(read_only.output), read_only.output
    assert "+precious data, changed" in read_only.output


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize(
    "layout", [config_is_a_link, git_dir_is_a_file, git_dir_is_a_link, commondir]
)
async def test_a_git_dir_that_cannot_be_covered_hides_the_repository(
    kind: str, layout: Callable[[Path], None], request: pytest.FixtureRequest
) -> None:
    with hostile_repo(DIFF_EXTERNAL, layout) as repo:
        async with sandbox_in(kind, repo, request) as box:
            read_only = await box.run_command("git diff" + RAN, timeout=30, read_only=True)
            status = await box.run_command("git status", timeout=30, read_only=True)
            other = await box.run_command("cat README.md", timeout=30, read_only=True)
            unguarded = await box.run_command("git diff" + RAN, timeout=30)
    assert hook_ran(unguarded.output), f"git does not use this layout: {unguarded.output}"
    assert not hook_ran(read_only.output), read_only.output
    assert HIDDEN in read_only.output.lower()
    assert status.exit_code != 0 and f"fatal: {HIDDEN}" in status.output
    assert other.output == "# project\n"  # the rest of the view is as it was


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_config_that_is_a_fifo_hides_the_repository(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """Never opened: git would wait on it for a writer."""
    with hostile_repo(DIFF_EXTERNAL, config_is_a_fifo) as repo:
        async with sandbox_in(kind, repo, request) as box:
            result = await box.run_command("git status" + RAN, timeout=10, read_only=True)
    assert not result.timed_out
    assert HIDDEN in result.output and not hook_ran(result.output)


def add_submodule(repo: Path) -> None:
    """A submodule whose own config (.git/modules/sub/config) has a clean filter for its
    tracked s.txt, which `git status` in the superproject checks (its owner changed)."""
    source = Path(tempfile.mkdtemp(prefix="co-gitcfg-sub-", dir="/tmp"))
    try:
        git(source, "init", "-q", "-b", "main")
        (source / "s.txt").write_text("sub\n")
        (source / ".gitattributes").write_text("*.txt filter=hostile\n")
        git(source, "add", "-A")
        git(source, "commit", "-q", "-m", "sub")
        git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
        git(repo, "commit", "-q", "-m", "submodule")
    finally:
        shutil.rmtree(source, ignore_errors=True)
    with (repo / ".git" / "modules" / "sub" / "config").open("a") as file:
        file.write(CLEAN_FILTER)


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_program_a_submodule_config_names_never_runs(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with hostile_repo(layout=add_submodule) as repo:
        async with sandbox_in(kind, repo, request) as box:
            read_only = await box.run_command("git status" + RAN, timeout=30, read_only=True)
            unguarded = await box.run_command("git status" + RAN, timeout=30)
    assert hook_ran(unguarded.output), f"the submodule's filter runs nothing: {unguarded.output}"
    assert not hook_ran(read_only.output), read_only.output
    assert "modified:   victim.txt" in read_only.output


@pytest.mark.docker
async def test_a_config_replaced_on_the_host_is_covered_again(
    request: pytest.FixtureRequest,
) -> None:
    """A mount over .git/config no longer covers a file put in its place (as `git config`
    does: a new file renamed over it): the read-only container is made anew."""
    with hostile_repo() as repo:
        async with sandbox_in("docker", repo, request) as box:
            first = await box.run_command("git config --local --list", read_only=True)
            config = repo / ".git" / "config"
            replacement = config.with_name("config.lock")
            replacement.write_text(config.read_text() + DIFF_EXTERNAL)
            os.chown(replacement, config.stat().st_uid, config.stat().st_gid)
            replacement.rename(config)
            after = await box.run_command("git diff" + RAN, timeout=30, read_only=True)
    assert first.output == ""
    assert not hook_ran(after.output), after.output
    assert "+precious data, changed" in after.output  # covered again, not hidden
