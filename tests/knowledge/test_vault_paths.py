"""Nothing outside the vault is ever read: traversal fuzz, symlinks, odd unicode."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai import ModelRetry

from co_tui.context.deps import CoDeps
from co_tui.knowledge.vault_paths import UnsafePathError, clean_name
from co_tui.tools.obsidian import list_notes, read_note, search_notes
from tests.helpers import model_view
from tests.knowledge.conftest import SECRET, ctx_for, write
from tests.sizes import examples

PIECES = st.sampled_from([
    "..", ".", "/", "//", "secret.txt", "secret", "vault", "projects", "alpha.md", "~",
    "\x00", "\n", "\u202e", "\u200b", "%2e%2e", "..\\", "\\", "C:", " ", "..../", "...",
    "\u2024\u2024", "\uff0e\uff0e", "link", "out",
])  # fmt: skip
NAMES = st.one_of(
    st.lists(PIECES, min_size=1, max_size=8).map("".join),
    st.text(min_size=1, max_size=30),
    st.lists(PIECES, min_size=1, max_size=5).map("/".join),
)


def _read_or_refuse(deps: CoDeps, name: str) -> str | None:
    try:
        return read_note(ctx_for(deps), name)
    except ModelRetry:
        return None


@pytest.mark.slow
@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(name=NAMES)
def test_no_generated_name_reads_outside_the_vault(deps: CoDeps, vault: Path, name: str) -> None:
    text = _read_or_refuse(deps, name)
    assert text is None or SECRET not in text
    text = _read_or_refuse(deps, f"{name}/../../secret.txt")
    assert text is None or SECRET not in text


@pytest.mark.parametrize("name", [
    "../secret.txt", "projects/../../secret.txt", "/etc/passwd", "~/secret.txt",
    "..\\secret.txt", "C:/secret.txt", "projects/\x00alpha.md", "projects/alpha\u202e.md",
    "alpha\u200b.md", "a\nb.md", ".", "", "   ",
])  # fmt: skip
def test_traversal_and_odd_names_are_refused(deps: CoDeps, name: str) -> None:
    with pytest.raises(ModelRetry):
        read_note(ctx_for(deps), name)


def test_symlinks_are_refused_and_not_indexed(deps: CoDeps, vault: Path) -> None:
    """Every link is refused, one pointing back inside the vault too (the simple rule)."""
    secret = vault.parent / "secret.txt"
    (vault / "leak.md").symlink_to(secret)
    (vault / "outdir").symlink_to(vault.parent, target_is_directory=True)
    (vault / "inner.md").symlink_to(vault / "projects" / "beta.md")
    ctx = ctx_for(deps)
    for name in ("leak.md", "leak", "outdir/secret.txt", "outdir/vault/../secret.txt"):
        with pytest.raises(ModelRetry):
            read_note(ctx, name)
    with pytest.raises(ModelRetry, match=r"inner\.md is a symbolic link; links are not followed"):
        read_note(ctx, "inner.md")
    with pytest.raises(ModelRetry, match="outdir is a symbolic link"):
        read_note(ctx, "outdir/outside-note.md")
    write(vault.parent, "outside-note.md", f"{SECRET} budget")
    assert SECRET not in model_view(search_notes(ctx, "budget"))["display"]
    assert SECRET not in str(model_view(search_notes(ctx, SECRET.split("-")[-1])))
    listed = model_view(list_notes(ctx))["notes"]
    assert "leak.md" not in listed and not any(p.startswith("outdir/") for p in listed)
    assert "inner.md" not in listed and "projects/beta.md" in listed


def test_clean_name_normalises_to_nfc() -> None:
    assert clean_name("Cafe\u0301.md") == "Caf\u00e9.md"
    with pytest.raises(UnsafePathError):
        clean_name("ok/../../x")
