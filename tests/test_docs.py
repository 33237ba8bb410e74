"""The docs hold to the code and to their shape: the generated parts of docs/ are what
scripts/gen_docs.py generates now, the README stays short and starts with the two commands,
and no relative link in the README or docs/ points at a file that is not there."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 200


def _gen_docs() -> ModuleType:
    """scripts/gen_docs.py as a module (scripts/ is not a package)."""
    name = "co_tui_gen_docs"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


gen_docs = _gen_docs()


def _region(text: str, name: str) -> str:
    start = gen_docs.start_marker(name)
    assert start in text, f"no {start} marker"
    inner = text.split(start, 1)[1]
    assert gen_docs.END_MARKER in inner, f"no {gen_docs.END_MARKER} after {start}"
    return inner.split(gen_docs.END_MARKER, 1)[0]


@pytest.mark.parametrize("region", gen_docs.REGIONS, ids=lambda r: f"{r.page}:{r.name}")
def test_generated_region_is_what_the_code_generates(region: Any) -> None:
    text = (ROOT / region.page).read_text(encoding="utf-8")
    assert _region(text, region.name) == "\n" + region.render(), (
        f"{region.page}: the generated `{region.name}` region is stale; "
        "run .venv/bin/python scripts/gen_docs.py"
    )


def test_check_names_a_stale_page(tmp_path: Path) -> None:
    for region in gen_docs.REGIONS:
        target = tmp_path / region.page
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / region.page, target)
    assert gen_docs.stale_pages(tmp_path) == []
    page = tmp_path / "docs" / "events.md"
    page.write_text(page.read_text().replace("### `turn_start`", "### `turn_begin`"))
    assert gen_docs.stale_pages(tmp_path) == ["docs/events.md"]
    assert gen_docs.write_pages(tmp_path) == ["docs/events.md"]
    assert gen_docs.stale_pages(tmp_path) == []


def test_every_setting_and_event_is_listed() -> None:
    from co_tui.config.settings import Settings
    from co_tui.protocol.events import TurnEvent

    settings = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for field in Settings.model_fields:
        assert f"| `{field}` |" in settings, field
    events = (DOCS / "events.md").read_text(encoding="utf-8")
    for event in get_args(TurnEvent):
        assert f"### `{event.type}` ({event.__name__})" in events, event


def test_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; move detail into docs/ (at most {README_MAX_LINES})"
    )


def _fenced_commands(text: str) -> list[str]:
    """The commands of the fenced code blocks, in order: each line without its comment."""
    commands: list[str] = []
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            command = line.split("#", 1)[0].strip()
            if command:
                commands.append(command)
    return commands


def test_readme_starts_with_make_run_and_make_test() -> None:
    assert _fenced_commands(README.read_text(encoding="utf-8"))[:2] == ["make run", "make test"]


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _relative_links(text: str) -> list[str]:
    """Link targets outside code, without their #fragment, that are not URLs or anchors."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    targets = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def _markdown_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", _markdown_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_files(page: Path) -> None:
    missing = [
        target
        for target in _relative_links(page.read_text(encoding="utf-8"))
        if not (page.parent / target).exists()
    ]
    assert missing == [], f"{page.relative_to(ROOT)} links to missing files: {missing}"


def test_the_link_check_sees_links() -> None:
    text = "[a](docs/x.md#y) `[b](c.md)` [d](https://e.org) [f](#g)\n```\n[h](i.md)\n```\n"
    assert _relative_links(text) == ["docs/x.md"]
    assert "docs/security.md" in _relative_links(README.read_text(encoding="utf-8"))
