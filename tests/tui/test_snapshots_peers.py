"""Snapshots of the everyday features peers have: the @ picker. Update with
`pytest tests/tui/test_snapshots_peers.py --snapshot-update` and look at every SVG in
snapshots/test_snapshots_peers/ before accepting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from co_tui.config.settings import Settings
from tests.tui.helpers import make_app, picker_settled, text_stream

SIZE = (100, 30)
FILES = (
    "README.md",
    "src/co_tui/app.py",
    "src/co_tui/context/attachments.py",
    "src/co_tui/tui/app.py",
    "src/co_tui/tui/widgets/prompt.py",
    "docs/api.md",
    "tests/test_app.py",
)


@pytest.mark.slow
def test_at_picker_with_fuzzy_results(snap_compare: Any, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    vault = tmp_path / "vault"
    for name in FILES:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("x\n", encoding="utf-8")
    vault.mkdir()
    (vault / "Apps to try.md").write_text("x\n", encoding="utf-8")
    settings = Settings(theme="textual-dark", obsidian_vault_path=str(vault))
    app = make_app(text_stream("unused"), workspace, settings=settings)

    async def run_before(pilot: Any) -> None:
        pilot.app.chat.prompt.cursor_blink = False
        assert await pilot.app.wait_ready()  # the picker lists the session's workspace
        await pilot.press(*"what does @app")
        await picker_settled(pilot, pilot.app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.slow
def test_a_large_paste_folded_in_the_prompt(snap_compare: Any, tmp_path: Path) -> None:
    from textual import events

    log = "\n".join(f"2024-05-01 12:00:{n % 60:02} worker-{n} finished" for n in range(2000))
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        pilot.app.chat.prompt.cursor_blink = False
        assert await pilot.app.wait_ready()
        pilot.app.post_message(events.Paste(log))
        await pilot.pause()
        for key in " why did worker-7 stop?":
            await pilot.press("space" if key == " " else key)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


@pytest.mark.slow
def test_ctrl_r_searches_the_prompt_history(snap_compare: Any, tmp_path: Path) -> None:
    from co_tui.tui.widgets.prompt import PromptHistory

    path = tmp_path / "history"
    history = PromptHistory(path)
    for text in (
        "run the tests in tests/tui",
        "explain the egress guard\nand where it is configured",
        "Run the TESTS again but only the slow ones",
        "what is in docs/usage.md",
    ):
        history.add(text)
    app = make_app(text_stream("unused"), tmp_path, history_path=path)

    async def run_before(pilot: Any) -> None:
        pilot.app.chat.prompt.cursor_blink = False
        await pilot.press("ctrl+r")
        pilot.app.chat.history_search.field.cursor_blink = False
        await pilot.press(*"the")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
