"""The trust-review attacks replayed through the app (Pilot) with the real bwrap sandbox:
none runs without asking, the dialog says why it asks, and denying leaves the workspace
byte-identical with one transcript line naming the decision."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from co_tui.sandbox import SandboxError, select_sandbox
from tests.helpers import engine_unavailable
from tests.security.hostile import ATTACKS, hostile_workspace, tree_digest
from tests.tui.helpers import SIZE, approval_dialog, make_app, rendered, settle, shell_then_text

pytestmark = pytest.mark.bwrap


@pytest.fixture
def repo() -> Iterator[Path]:
    with hostile_workspace() as path:
        yield path


@pytest.mark.parametrize("command", list(ATTACKS))
async def test_attack_asks_says_why_and_changes_nothing_when_denied(
    repo: Path, command: str
) -> None:
    try:
        choice = select_sandbox("bwrap", repo, session_id="11111111-2222-3333-4444-555555555555")
    except SandboxError as exc:
        engine_unavailable(f"bwrap cannot run here: {exc}")
    before = tree_digest(repo)
    app = make_app(shell_then_text([command], final="ok"), repo, sandbox_choice=choice)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.prompt.text = "look around"
        await pilot.press("enter")
        dialog = await approval_dialog(pilot, app)
        assert "not run automatically" in dialog.request.reason, dialog.request.reason
        assert "not run automatically" in rendered(dialog.query_one("#approval-reason"))
        await pilot.press("n")
        await settle(pilot, app)
        transcript = rendered(app.chat.transcript)
        assert "denied run_shell_command" in transcript
        assert app.session.deps is not None and not app.session.deps.auto_confirm
        await app.session.deps.sandbox.cleanup()
    assert tree_digest(repo) == before, f"{ATTACKS[command]} changed"
