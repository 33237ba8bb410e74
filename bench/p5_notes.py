"""P5: notes search on a generated 10,000-note vault, against ripgrep on the same files.

Prints the full index build time, an incremental refresh after one note changes (goal:
<= 1/100 of the full build), and per-query search_notes time against `rg` for the same
words (goal: <= 1x). search_notes timings include its mtime refresh of the whole vault.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

NOTES = 10_000
REPEATS = 5
QUERIES = [
    "kavo", "relun mistar", "budget meeting", "python", "tolo vesa dram", "garden roses",
    "zenith", "project alpha", "coffee", "quarn lipet",
]  # fmt: skip
COMMON = [
    "the", "a", "of", "and", "to", "in", "is", "for", "on", "with", "that", "this", "it",
    "as", "at", "by", "from", "be", "are", "was", "project", "meeting", "budget", "garden",
    "roses", "python", "coffee", "alpha", "notes", "idea", "todo", "review", "plan", "week",
]  # fmt: skip


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    consonants, vowels = "bcdfghjklmnpqrstvwxz", "aeiou"
    words = set()
    while len(words) < size:
        n = rng.randint(2, 3)
        words.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(n)))
    return sorted(words)


def generate_vault(root: Path, count: int = NOTES, seed: int = 5) -> int:
    """Markdown notes of ~400 bytes: frontmatter tags, headings, Zipf-ish word mix."""
    rng = random.Random(seed)
    planted = ["kavo", "relun", "mistar", "tolo", "vesa", "dram", "zenith", "quarn", "lipet"]
    vocab = [*_vocabulary(rng), *planted]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    rng.shuffle(weights)
    total = 0
    for i in range(count):
        words = [
            rng.choice(COMMON) if rng.random() < 0.45 else rng.choices(vocab, weights)[0]
            for _ in range(rng.randint(40, 90))
        ]
        tags = rng.sample(["work", "home", "idea", "journal", "project/alpha"], rng.randint(0, 2))
        body = (
            (f"---\ntags: [{', '.join(tags)}]\n---\n" if tags else "")
            + f"# Note {i}\n\n"
            + " ".join(words)
            + (f"\n\n#{rng.choice(['todo', 'later'])}\n" if rng.random() < 0.3 else "\n")
        )
        path = root / f"area{i % 20}" / f"sub{i % 7}" / f"note-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        total += len(body.encode())
    return total


def _best(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _rg(vault: Path, query: str) -> None:
    args = ["rg", "-l", "-i", "-w", "--no-messages", "-g", "*.md"]
    for word in query.split():
        args += ["-e", word]
    subprocess.run([*args, str(vault)], stdout=subprocess.DEVNULL, check=False)


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="co-tui-p5-"))
    os.environ["XDG_DATA_HOME"] = str(tmp / "data")  # keep the index out of the real data dir
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from co_tui.context.deps import CoDeps
    from co_tui.knowledge.notes_index import NotesIndex
    from co_tui.sandbox import SubprocessSandbox
    from co_tui.tools.obsidian import notes_index, search_notes

    try:
        vault = tmp / "vault"
        size = generate_vault(vault)
        print(f"P5 notes: {NOTES} notes, {size / 1e6:.1f} MB of Markdown in {vault}")

        build_index = NotesIndex(vault)
        start = time.perf_counter()
        stats = build_index.refresh()
        full = time.perf_counter() - start
        print(f"  full index build: {full * 1000:.0f} ms ({stats.reindexed} notes indexed)")

        changed = vault / "area3" / "sub3" / "note-00003.md"
        changed.write_text(changed.read_text() + "\nfreshly added words\n", encoding="utf-8")
        start = time.perf_counter()
        stats = build_index.refresh()
        incremental = time.perf_counter() - start
        print(
            f"  incremental refresh after 1 change: {incremental * 1000:.1f} ms "
            f"({stats.reindexed} re-read); ratio {incremental / full:.4f} (goal <= 0.01)"
        )
        build_index.close()

        deps = CoDeps(sandbox=SubprocessSandbox(tmp), workspace=tmp, obsidian_vault_path=vault)
        ctx = RunContext(deps=deps, model=TestModel(), usage=RunUsage())
        notes_index(deps, vault).refresh()  # reopen: the session's index, already built
        ratios = []
        print(f"  {'query':<18}{'hits':>6}{'search_notes':>14}{'rg':>10}{'ratio':>8}")
        for query in QUERIES:
            hits = search_notes(ctx, query).return_value["count"]
            ours = _best(lambda q=query: search_notes(ctx, q))
            theirs = _best(lambda q=query: _rg(vault, q))
            ratios.append(ours / theirs)
            print(f"  {query:<18}{hits:>6}{ours * 1000:>12.1f}ms{theirs * 1000:>8.1f}ms"
                  f"{ours / theirs:>7.2f}x")  # fmt: skip
        print(
            f"  search_notes / rg: median {statistics.median(ratios):.2f}x, "
            f"worst {max(ratios):.2f}x (goal <= 1x)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
