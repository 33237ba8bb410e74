"""Memories: files on disk, near-duplicate updates, decay, forget, hand edits, recall."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_tui.config.paths import user_data_dir
from co_tui.config.settings import Settings
from co_tui.memory.config import MemoryConfig
from co_tui.memory.lifecycle import save_memory_entry
from co_tui.memory.store import MemoryStore
from co_tui.tools.memory import forget_memory, list_memories, recall_memory, save_memory
from tests.helpers import make_deps, model_view
from tests.knowledge.conftest import ctx_for

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def config(tmp_path: Path, **kw) -> MemoryConfig:
    return MemoryConfig(directory=tmp_path / "mem", **kw)


def contents(cfg: MemoryConfig) -> list[str]:
    return [m.content for m in MemoryStore(cfg.path).load().memories]


async def test_near_duplicate_updates_within_window_else_adds(tmp_path: Path) -> None:
    cfg = config(tmp_path, dedup_window_days=7, dedup_threshold=85)
    first = await save_memory_entry("The user prefers green tea.", ["prefs"], cfg, now=T0)
    same = await save_memory_entry(
        "the user prefers green tea!", ["drinks"], cfg, now=T0 + timedelta(days=1)
    )
    assert (first.action, same.action) == ("added", "updated")
    assert same.memory.id == first.memory.id
    (only,) = MemoryStore(cfg.path).load().memories
    assert only.tags == ["prefs", "drinks"] and only.updated == T0 + timedelta(days=1)
    assert only.created == T0

    different = await save_memory_entry("Ana's birthday is 3 March.", [], cfg, now=T0)
    assert different.action == "added"
    stale = await save_memory_entry(
        "The user prefers green tea.", [], cfg, now=T0 + timedelta(days=30)
    )
    assert stale.action == "added"  # outside the window: a new memory
    assert len(contents(cfg)) == 3


def _summariser(seen: list[str]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = messages[-1].parts[-1].content  # type: ignore[union-attr]
        seen.append(str(prompt))
        assert info.function_tools == []  # the summariser has no tools
        return ModelResponse(parts=[TextPart("SUMMARY: facts 0, 1")])

    return FunctionModel(answer)


FACTS = [
    "fact0: the user likes jazz records",
    "fact1: Ana's birthday falls in March",
    "fact2: project Falcon ships on Friday",
    "fact3: the car needs new winter tyres",
    "fact4: dentist appointment booked for June",
]


async def _fill(cfg: MemoryConfig, n: int) -> None:
    for i in range(n):
        await save_memory_entry(FACTS[i], [f"t{i}"], cfg, now=T0 + timedelta(hours=i))


async def test_decay_summarize_folds_the_oldest_into_one(tmp_path: Path) -> None:
    cfg = config(tmp_path, max_count=5, decay_percentage=0.3, decay_strategy="summarize")
    await _fill(cfg, 5)
    seen: list[str] = []
    outcome = await save_memory_entry(
        "a sixth, unrelated memory", [], cfg, model=_summariser(seen), now=T0 + timedelta(days=1)
    )
    assert len(outcome.decayed_ids) == 2  # ceil(6 * 0.3)
    assert "fact0" in seen[0] and "fact1" in seen[0] and "fact2" not in seen[0]
    memories = MemoryStore(cfg.path).load().memories
    assert len(memories) == 5
    summary = next(m for m in memories if m.content.startswith("SUMMARY"))
    assert summary.tags[:1] == ["summary"] and {"t0", "t1"} <= set(summary.tags)
    assert not any(c.startswith(("fact0", "fact1")) for c in contents(cfg))


async def test_decay_cut_deletes_the_oldest(tmp_path: Path) -> None:
    cfg = config(tmp_path, max_count=4, decay_percentage=0.25, decay_strategy="cut")
    await _fill(cfg, 4)
    outcome = await save_memory_entry("newest", [], cfg, now=T0 + timedelta(days=1))
    assert outcome.summary is None and len(outcome.decayed_ids) == 2  # ceil(5 * 0.25)
    left = contents(cfg)
    assert len(left) == 3 and "newest" in left
    assert not any(c.startswith(("fact0", "fact1")) for c in left)


async def test_failing_summariser_keeps_every_memory(tmp_path: Path) -> None:
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("model down")

    cfg = config(tmp_path, max_count=3, decay_strategy="summarize")
    await _fill(cfg, 3)
    outcome = await save_memory_entry("four", [], cfg, model=FunctionModel(broken))
    assert outcome.decayed_ids == [] and "summarising failed" in outcome.warnings[0]
    assert len(contents(cfg)) == 4


async def test_hand_edited_and_malformed_files(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    saved = await save_memory_entry("The user's dog is called Rex.", ["pets"], cfg, now=T0)
    path = saved.memory.path
    assert path is not None and path.parent == cfg.path and path.suffix == ".md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\nid: 1\n") and "tags: [pets]" in text
    path.write_text(text.replace("Rex", "Rexford"), encoding="utf-8")  # a hand edit
    (cfg.path / "0002-broken.md").write_text("---\nid: [oops\n---\nbody\n", encoding="utf-8")
    (cfg.path / "notes.md").write_text("just some text, no frontmatter\n", encoding="utf-8")
    (cfg.path / "0003-bin.md").write_bytes(b"\xff\xfe\x00bad")
    (cfg.path / "0004-dup.md").write_text(text, encoding="utf-8")  # duplicate id 1

    loaded = MemoryStore(cfg.path).load()
    assert [m.content for m in loaded.memories] == ["The user's dog is called Rexford."]
    assert len(loaded.problems) == 4
    assert any("0002-broken.md" in p and "YAML" in p for p in loaded.problems)
    nxt = await save_memory_entry("Completely different fact.", [], cfg, now=T0)
    assert nxt.memory.id == 5  # never reuses an id a skipped file may hold


async def test_tools_across_two_sessions_and_forget(tmp_path: Path) -> None:
    settings = Settings(memory_dedup_threshold=90)
    one = make_deps(tmp_path, settings)
    two = make_deps(tmp_path, settings)
    assert one.session_id != two.session_id
    saved = model_view(
        await save_memory(ctx_for(one), "The user takes oat milk in coffee.", ["drinks"])
    )
    await save_memory(ctx_for(one), "The user's sister Ana lives in Lisbon.")
    assert saved["action"] == "added" and "Saved memory #1" in saved["display"]
    assert (user_data_dir() / "memories").is_dir()

    found = model_view(recall_memory(ctx_for(two), "what milk in coffee?"))
    assert found["count"] >= 1 and found["memories"][0]["id"] == 1
    assert "oat milk" in found["display"]
    assert (model_view(recall_memory(ctx_for(two), "Lisbon")))["memories"][0]["id"] == 2
    assert (model_view(recall_memory(ctx_for(two), "quantum chromodynamics")))["count"] == 0

    listed = model_view(list_memories(ctx_for(two)))
    assert listed["count"] == 2 and "#2" in listed["display"].splitlines()[1]

    assert forget_memory("1").startswith("Forgot memory #1")
    assert forget_memory("#1") == "No memory #1."
    assert "usage" in forget_memory("abc")
    assert (model_view(list_memories(ctx_for(one))))["count"] == 1


async def test_save_memory_rejects_empty(tmp_path: Path) -> None:
    from pydantic_ai import ModelRetry

    with pytest.raises(ModelRetry):
        await save_memory(ctx_for(make_deps(tmp_path)), "   ")
