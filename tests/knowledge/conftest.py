"""Vault fixtures and a RunContext for calling tools directly (real files, real SQLite)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pydantic_ai import RunContext
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from co_tui.config.settings import Settings
from co_tui.context.deps import CoDeps
from tests.helpers import make_deps

SECRET = "TOP-SECRET-7f3a9c"
WORDS = [
    "alpha", "beta", "gamma", "delta", "river", "mountain", "coffee", "garden", "budget",
    "meeting", "project", "planning", "python", "rust", "docker", "kernel", "orange",
    "violet", "harbor", "lantern",
]  # fmt: skip


def ctx_for(deps: CoDeps) -> RunContext[CoDeps]:
    return RunContext(deps=deps, model=TestModel(), usage=RunUsage())


def write(vault: Path, rel: str, text: str) -> Path:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A small hand-written vault, with a secret file next to it (outside)."""
    root = tmp_path / "vault"
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    write(root, "projects/alpha.md", "---\ntags: [project, work/q3]\n---\n# Alpha\n"
          "The Alpha project budget meeting is on Monday. Coffee after.\n")  # fmt: skip
    write(root, "projects/beta.md", "# Beta\nBudgeting notes: the beta budget is tight. #project\n")
    write(root, "daily/2026-01-05.md", "Met Ana about the garden. #journal #garden/roses\n"
          "```\n#notatag inside code\n```\nIssue #123 is not a tag.\n")  # fmt: skip
    write(root, "recipes/Café.md", "tags: not frontmatter\nCafé au lait with COFFEE beans.\n")
    write(root, "c-notes.md", "Learning C++ and c# today; c is old.\n")
    write(root, ".obsidian/workspace.md", "hidden budget config")
    return root


@pytest.fixture
def deps(tmp_path: Path, vault: Path) -> CoDeps:
    settings = Settings(obsidian_vault_path=str(vault))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return make_deps(workspace, settings)


def generate_vault(root: Path, count: int, seed: int = 7) -> dict[str, str]:
    """`count` notes of random words (some capitalised, some glued to punctuation)."""
    rng = random.Random(seed)
    notes: dict[str, str] = {}
    for i in range(count):
        words = []
        for _ in range(rng.randint(20, 60)):
            word = rng.choice(WORDS)
            style = rng.random()
            if style < 0.1:
                word = word.upper()
            elif style < 0.2:
                word = word + "s"  # plural: must not match the singular keyword
            elif style < 0.25:
                word = f"({word}),"
            words.append(word)
        tags = rng.sample(["work", "home", "idea"], rng.randint(0, 2))
        head = f"---\ntags: [{', '.join(tags)}]\n---\n" if tags else ""
        rel = f"folder{i % 7}/note-{i:04d}.md"
        notes[rel] = head + " ".join(words) + "\n"
        write(root, rel, notes[rel])
    return notes
