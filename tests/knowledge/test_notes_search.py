"""search_notes / list_notes / read_note on real vault files and a real SQLite index."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from pydantic_ai import ModelRetry

from co_tui.config.settings import Settings
from co_tui.context.deps import CoDeps
from co_tui.knowledge.notes_index import NotesIndex
from co_tui.tools.obsidian import list_notes, read_note, search_notes
from tests.helpers import make_deps, model_view
from tests.knowledge.conftest import ctx_for, generate_vault, write


def paths(result: dict) -> list[str]:
    return [r["path"] for r in result["results"]]


def test_and_semantics_word_boundaries_and_case(deps: CoDeps) -> None:
    ctx = ctx_for(deps)
    both = model_view(search_notes(ctx, "BUDGET meeting"))
    assert paths(both) == ["projects/alpha.md"]
    assert both["count"] == 1 and both["has_more"] is False
    assert "budget meeting" in both["display"]  # snippet around the hit

    budget = model_view(search_notes(ctx, "budget"))
    # "Budgeting" is not the word "budget"; the hidden .obsidian note is not indexed.
    assert sorted(paths(budget)) == ["projects/alpha.md", "projects/beta.md"]

    assert sorted(paths(model_view(search_notes(ctx, "coffee")))) == [
        "projects/alpha.md",
        "recipes/Café.md",
    ]
    assert paths(model_view(search_notes(ctx, "café"))) == ["recipes/Café.md"]
    assert paths(model_view(search_notes(ctx, "c++"))) == ["c-notes.md"]
    none = model_view(search_notes(ctx, "budget garden"))
    assert none["count"] == 0 and none["results"] == [] and "No notes" in none["display"]


def test_empty_query_and_unconfigured_vault_raise_model_retry(tmp_path: Path, deps) -> None:
    with pytest.raises(ModelRetry):
        search_notes(ctx_for(deps), "   ")
    ws = tmp_path / "other"
    ws.mkdir()
    bare = ctx_for(make_deps(ws, Settings()))
    for call in (lambda: search_notes(bare, "x"), lambda: list_notes(bare),
                 lambda: read_note(bare, "a.md")):  # fmt: skip
        with pytest.raises(ModelRetry, match="not configured"):
            call()


def test_tags_from_frontmatter_and_inline(deps: CoDeps) -> None:
    ctx = ctx_for(deps)
    assert model_view(list_notes(ctx, "project"))["notes"] == [
        "projects/alpha.md",
        "projects/beta.md",
    ]
    assert model_view(list_notes(ctx, "#work"))["notes"] == ["projects/alpha.md"]  # nested work/q3
    assert model_view(list_notes(ctx, "work/q3"))["notes"] == ["projects/alpha.md"]
    assert model_view(list_notes(ctx, "garden"))["notes"] == ["daily/2026-01-05.md"]
    assert model_view(list_notes(ctx, "Journal"))["count"] == 1
    for not_tags in ("notatag", "123", "not"):
        assert model_view(list_notes(ctx, not_tags))["count"] == 0
    everything = model_view(list_notes(ctx))
    assert everything["count"] == 5 and ".obsidian/workspace.md" not in everything["notes"]


def test_read_note_and_close_matches(deps: CoDeps) -> None:
    ctx = ctx_for(deps)
    assert "Café au lait" in read_note(ctx, "recipes/Café.md")
    assert "Beta" in read_note(ctx, "projects/beta")  # .md optional
    # NFD spelling of the same name is normalised to NFC.
    assert "Café au lait" in read_note(ctx, "recipes/Cafe\u0301.md")
    with pytest.raises(ModelRetry, match=r"not found.*projects/alpha\.md"):
        read_note(ctx, "projects/alpah.md")


def _oracle(notes: dict[str, str], words: list[str]) -> set[str]:
    pats = [re.compile(rf"(?<![A-Za-z0-9_]){w}(?![A-Za-z0-9_])", re.I) for w in words]
    return {rel for rel, text in notes.items() if all(p.search(f"{rel}\n{text}") for p in pats)}


@pytest.mark.parametrize("query", ["river", "coffee harbor", "PYTHON rust docker", "kernels"])
def test_generated_vault_matches_a_brute_force_oracle(tmp_path: Path, query: str) -> None:
    root = tmp_path / "gen"
    notes = generate_vault(root, 300)
    deps = make_deps(tmp_path, Settings(obsidian_vault_path=str(root)))
    expected = _oracle(notes, query.split())
    got: list[str] = []
    page = 1
    while True:
        result = model_view(search_notes(ctx_for(deps), query, limit=7, page=page))
        assert result["count"] == len(expected)
        got += paths(result)
        if not result["has_more"]:
            break
        page += 1
    assert len(got) == len(set(got)) and set(got) == expected
    assert page == max(1, -(-len(expected) // 7))


def test_pagination_past_the_end(tmp_path: Path) -> None:
    root = tmp_path / "gen"
    generate_vault(root, 40)
    deps = make_deps(tmp_path, Settings(obsidian_vault_path=str(root)))
    first = model_view(search_notes(ctx_for(deps), "alpha", limit=5))
    assert first["has_more"] and len(first["results"]) == 5 and "page=2" in first["display"]
    late = model_view(search_notes(ctx_for(deps), "alpha", limit=5, page=99))
    assert late["results"] == [] and not late["has_more"] and late["count"] == first["count"]


def test_index_refreshes_only_changed_notes_and_survives_restart(tmp_path: Path) -> None:
    root = tmp_path / "gen"
    generate_vault(root, 50)
    index = NotesIndex(root)
    assert index.refresh().reindexed == 50
    assert index.refresh().reindexed == 0

    note = root / "folder0/note-0000.md"
    note.write_text("now about zeppelin only\n", encoding="utf-8")
    later = time.time_ns() + 10_000_000
    os.utime(note, ns=(later, later))
    (root / "folder1/note-0001.md").unlink()
    write(root, "new.md", "zeppelin arrives")
    stats = index.refresh()
    assert (stats.reindexed, stats.removed, stats.notes) == (2, 1, 50)
    found = index.search(["zeppelin"]).matches
    assert sorted(m.path for m in found) == ["folder0/note-0000.md", "new.md"]
    index.close()

    reopened = NotesIndex(root)  # same database file under the XDG data dir
    assert reopened.refresh().reindexed == 0
    assert reopened.search(["zeppelin"]).total == 2
    reopened.close()


def test_corrupt_index_is_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "gen"
    generate_vault(root, 5)
    index = NotesIndex(root)
    index.db_path.parent.mkdir(parents=True, exist_ok=True)
    index.db_path.write_bytes(b"this is not sqlite" * 100)
    assert index.refresh().reindexed == 5
    index.close()


def test_incremental_refresh_agrees_with_a_fresh_scan(tmp_path: Path) -> None:
    """Edits, renames, deletions and new folders between refreshes (inotify where it
    exists, a full rescan otherwise) leave the same index as building from scratch."""
    root = tmp_path / "gen"
    generate_vault(root, 30)
    index = NotesIndex(root)
    index.refresh()
    ops = [
        lambda: (root / "folder0/note-0000.md").write_text("edited zeppelin", encoding="utf-8"),
        lambda: (root / "folder1/note-0001.md").rename(root / "folder1/renamed.md"),
        lambda: (root / "folder2/note-0002.md").unlink(),
        lambda: write(root, "brand/new/deep.md", "zeppelin in a new folder"),
        lambda: (root / "folder3").rename(root / "folder3-moved"),
        lambda: write(root, "folder4/.hidden.md", "zeppelin hidden"),
        lambda: (root / "folder5/note-0005.md").rename(root / "folder5/note-0005.txt"),
    ]
    for op in ops:
        op()
        index.refresh()
        fresh = NotesIndex(root, db_path=tmp_path / f"fresh-{id(op)}.sqlite")
        fresh.refresh()
        assert index.paths() == fresh.paths()
        assert index.search(["zeppelin"]).total == fresh.search(["zeppelin"]).total
        fresh.close()
    assert index.search(["zeppelin"]).total == 2
    index.close()
