"""Snapshots of the approval dialog's network line with `w` offered, and of its "what to do
instead" field open with words typed. The request is built as the turn runner builds it for
a bubblewrap sandbox with no network. Update with `--snapshot-update` and look at every SVG
in snapshots/test_snapshots_approval_choices/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from co_tui.protocol.frontend import ApprovalRequest, NetworkOffer
from co_tui.sandbox.base import NetworkAccess
from co_tui.tui.screens.approval import ApprovalScreen
from tests.tui.helpers import make_app, text_stream, wait_until

SMALL = (80, 24)
# What bubblewrap says (sandbox/bwrap.py), written out: building one needs bwrap.
BWRAP = NetworkAccess("none", granted="this machine's network, localhost services included")


def request() -> ApprovalRequest:
    return ApprovalRequest(
        session_id="11111111-2222-3333-4444-555555555555",
        tool_call_id="c1",
        tool_name="run_shell_command",
        args={"cmd": "pip install -r requirements.txt"},
        reason="runs a command in the sandbox (isolation: namespace)",
        suggested_rule="shell(pip install -r requirements.txt)",
        network_state=BWRAP.explain(),
        network=NetworkOffer(BWRAP.granted),
    )


async def open_dialog(pilot: Any) -> ApprovalScreen:
    app = pilot.app
    app.chat.prompt.cursor_blink = False
    assert await app.wait_ready()
    screen = ApprovalScreen(request(), arm_delay=0.01)
    await app.push_screen(screen)
    await wait_until(pilot, lambda: screen.armed, "the dialog to arm")
    await pilot.pause()
    return screen


def test_the_dialog_offers_the_network_for_one_command(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)
    assert snap_compare(app, terminal_size=SMALL, run_before=open_dialog)


def test_the_dialog_takes_what_to_do_instead(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(text_stream("unused"), tmp_path)

    async def run_before(pilot: Any) -> None:
        screen = await open_dialog(pilot)
        await pilot.press("t")
        await pilot.press(*("space" if c == " " else c for c in "use uv, not pip"))
        screen.feedback.input.cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
