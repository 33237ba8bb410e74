"""`@` mentions attach workspace files and vault notes, only from inside them."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.context.attachments import (
    MAX_FILE_BYTES,
    expand,
    mentions,
    vault_notes,
    workspace_files,
)
from co_tui.context.deps import create_deps
from co_tui.protocol.recording import RecordingFrontend
from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.session.chat import ChatSession
from tests.helpers import user_prompts


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def f(x):\n    return x * 2\n", encoding="utf-8")
    (ws / "README.md").write_text("# readme\n", encoding="utf-8")
    return ws


def notes(text: str, workspace: Path, vault: Path | None = None) -> list[str]:
    return [a.note for a in expand(text, workspace, vault).attachments]


def test_a_mentioned_file_is_attached_with_its_origin(workspace: Path) -> None:
    expanded = expand("explain @src/app.py, please", workspace)
    assert expanded.prompt.startswith("explain @src/app.py, please\n\n")
    assert "attached file: src/app.py (2 lines)\n```\ndef f(x):\n    return x * 2\n```" in (
        expanded.prompt
    )
    assert notes("explain @src/app.py, please", workspace) == ["attached src/app.py (2 lines)"]


def test_emails_and_prose_are_not_mentions(workspace: Path) -> None:
    assert mentions("mail a@b.com or x.y@README.md") == []
    expanded = expand("ping @everyone about a@b.com", workspace)
    assert expanded.prompt == "ping @everyone about a@b.com"
    assert expanded.attachments == ()


def test_a_file_mentioned_twice_is_attached_once(workspace: Path) -> None:
    expanded = expand("@README.md and again @README.md.", workspace)
    assert len(expanded.attached) == 1
    assert expanded.prompt.count("attached file: README.md") == 1


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "src/../../secret"])
def test_nothing_outside_the_workspace(workspace: Path, path: str) -> None:
    (workspace.parent / "secret").write_text("top secret", encoding="utf-8")
    expanded = expand(f"read @{path}", workspace)
    assert "root:" not in expanded.prompt and "top secret" not in expanded.prompt
    (note,) = [a.note for a in expanded.attachments]
    assert note == (
        f"not attached: @{path} (outside the workspace and the vault: only files inside "
        "them are attached)"
    )


def test_a_link_pointing_outside_is_refused(workspace: Path) -> None:
    (workspace.parent / "secret").write_text("top secret", encoding="utf-8")
    (workspace / "innocent.txt").symlink_to(workspace.parent / "secret")
    expanded = expand("@innocent.txt", workspace)
    assert "top secret" not in expanded.prompt
    assert "innocent.txt is a symbolic link" in expanded.attachments[0].note


def test_a_fifo_a_binary_and_a_huge_file(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    (workspace / "zeros.txt").write_bytes(b"a\x00b")
    (workspace / "huge.log").write_text("line\n" * 100_000, encoding="utf-8")
    expanded = expand("@pipe @blob.bin @zeros.txt @huge.log", workspace)
    by_origin = {a.mention.path: a for a in expanded.attachments}
    assert "pipe is not a regular file" in by_origin["pipe"].note
    assert "blob.bin is not UTF-8 text" in by_origin["blob.bin"].note
    assert by_origin["zeros.txt"].note == "not attached: @zeros.txt (a binary file, not text)"
    huge = by_origin["huge.log"]
    assert huge.note == f"attached huge.log (20,000 lines, cut at {MAX_FILE_BYTES:,} bytes)"
    assert len(expanded.prompt) < MAX_FILE_BYTES + 1000


def test_notes_come_from_the_vault(workspace: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "Projects").mkdir(parents=True)
    (vault / "Projects" / "my plan.md").write_text("step one\n", encoding="utf-8")
    expanded = expand('see @note:"Projects/my plan.md"', workspace, vault)
    assert "attached note: Projects/my plan.md (1 line)\n```\nstep one\n```" in expanded.prompt
    assert notes("@note:x.md", workspace) == [
        "not attached: @note:x.md (no Obsidian vault is configured)"
    ]
    assert notes("@note:../ws/README.md", workspace, vault)[0].startswith("not attached")


def test_a_fence_inside_the_file_cannot_close_the_attachment(workspace: Path) -> None:
    (workspace / "doc.md").write_text("```\nnot the end\n```\n", encoding="utf-8")
    assert "\n````\n```\nnot the end\n```\n````" in expand("@doc.md", workspace).prompt


def test_candidates_obey_gitignore_and_skip_hidden_folders(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".hidden").mkdir()
    (workspace / ".hidden" / "x").write_text("x")
    (workspace / "node_modules").mkdir()
    (workspace / "node_modules" / "dep.js").write_text("x")
    assert workspace_files(workspace) == ["README.md", "src/app.py"]
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "debug.log").write_text("x")
    files = workspace_files(workspace)
    assert "debug.log" not in files and "src/app.py" in files and ".gitignore" in files
    assert workspace_files(workspace, limit=1) == [files[0]]
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / ".obsidian" / "app.md").write_text("x")
    (vault / "Inbox.md").write_text("x")
    (vault / "image.png").write_text("x")
    assert vault_notes(vault) == ["Inbox.md"]


def echo_prompt() -> Any:
    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "ok"

    return fn


async def test_every_front_attaches_through_the_session(workspace: Path) -> None:
    settings = Settings(telemetry_enabled=False)
    model = FunctionModel(stream_function=echo_prompt(), model_name="fn")
    bundle = build_agent(settings, model=model, instructions="test")
    choice = SandboxChoice(SubprocessSandbox(workspace), "test sandbox")
    deps = create_deps(settings, workspace, sandbox_choice=choice)
    frontend = RecordingFrontend()
    session = ChatSession(settings, frontend=frontend, record=False, bundle=bundle, deps=deps)
    try:
        await session.start()
        await session.run("what does @src/app.py do? not @../../etc/passwd")
    finally:
        await session.aclose()
    (sent,) = user_prompts(session.history)
    assert "attached file: src/app.py (2 lines)" in sent and "return x * 2" in sent
    assert [(s.message, s.level) for s in frontend.of("status")] == [
        ("attached src/app.py (2 lines)", "info"),
        (
            "not attached: @../../etc/passwd (outside the workspace and the vault: only "
            "files inside them are attached)",
            "warning",
        ),
    ]


def test_a_folder_its_repository_ignores_is_walked(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("scratch/\n")
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "notes.txt").write_text("x")
    assert workspace_files(tmp_path / "scratch") == ["notes.txt"]


def test_an_attached_file_is_a_private_source_and_not_replayed(
    workspace: Path, tmp_path: Path
) -> None:
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from co_tui.policy.egress import context_sources
    from co_tui.turn.replay import replay

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "plan.md").write_text("the secret plan\n", encoding="utf-8")
    prompt = expand("see @note:plan.md and @src/app.py", workspace, vault).prompt
    messages = [ModelRequest(parts=[UserPromptPart(content=prompt)])]
    sources = context_sources(messages)
    assert [(s.label, s.origin.private, s.text) for s in sources] == [
        ("attached note plan.md", True, "the secret plan\n"),
        ("attached file src/app.py", True, "def f(x):\n    return x * 2\n"),
    ]
    (start, *_) = list(replay(messages, "sid"))
    assert getattr(start, "prompt", None) == "see @note:plan.md and @src/app.py"
    assert context_sources([ModelRequest(parts=[UserPromptPart(content="see @x")])]) == []


def test_a_hostile_repositorys_config_runs_nothing_when_files_are_listed(tmp_path: Path) -> None:
    """A cloned repository's .git/config can name programs git runs (core.fsmonitor runs
    on every index read): listing the files for the @ picker must not start them."""
    workspace = tmp_path / "repo"
    marker = tmp_path / "pwned"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "notes.md").write_text("hello\n")
    subprocess.run(["git", "-C", str(workspace), "add", "notes.md"], check=True)
    hook = f"touch {marker}; false"
    subprocess.run(["git", "-C", str(workspace), "config", "core.fsmonitor", hook], check=True)

    assert workspace_files(workspace) == ["notes.md"]
    assert not marker.exists()
