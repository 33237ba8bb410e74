"""In the app: the sandbox's network on the status bar and in the dialog, `w` approving one
command with the network on (shown so in the transcript), a `!cmd` that failed for lack of
network saying so, and `t` denying with the user's words, which the model reads."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.sandbox import SandboxChoice, SubprocessSandbox
from co_tui.session.health import sandbox_rows
from co_tui.tui.widgets.items import Note
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.sandbox.conftest import host_listener, make_workspace, reach_script
from tests.tui.helpers import approval_dialog, make_app, rendered, settle, shell_then_text

__all__ = ["host_listener"]  # the fixture, used by name below

SMALL = (80, 24)


def notes(app: Any) -> list[str]:
    return [str(w._source) for w in app.chat.transcript.items if isinstance(w, Note)]


async def type_text(pilot: Any, text: str) -> None:
    await pilot.press(*("space" if c == " " else c for c in text))


async def submit(pilot: Any, app: Any, text: str) -> None:
    app.chat.prompt.text = text
    await pilot.press("enter")


@pytest.fixture
def sandboxed() -> Iterator[Path]:
    """A workspace the bubblewrap sandbox's user can write."""
    import shutil

    from co_tui.sandbox.bwrap import probe

    path = make_workspace()
    if why := probe(path):
        from tests.helpers import engine_unavailable

        engine_unavailable(why)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def bwrap_choice(workspace: Path) -> SandboxChoice:
    from co_tui.sandbox.bwrap import BwrapSandbox

    return SandboxChoice(BwrapSandbox(workspace), "test")


@pytest.mark.bwrap
async def test_w_gives_one_command_the_network_and_the_transcript_says_so(
    sandboxed: Path, host_listener: int
) -> None:
    cmd = f"python3 -c {shlex.quote(reach_script(host_listener))}"
    app = make_app(
        shell_then_text([cmd], final="ran"), sandboxed, sandbox_choice=bwrap_choice(sandboxed)
    )
    async with app.run_test(size=(110, 34)) as pilot:
        await settle(pilot, app)
        assert "no network" in rendered(app.chat.status_bar)
        await submit(pilot, app, "reach it")
        screen = await approval_dialog(pilot, app)
        network = rendered(screen.query_one("#approval-network"))
        assert "Network: commands cannot reach the network" in network
        assert "w  runs this command alone with this machine's network" in network
        assert " w  approve WITH NETWORK" in rendered(screen.keys)
        await pilot.press("w")
        await settle(pilot, app)
        [block] = app.chat.query(ToolCallBlock)
        assert block.network and "[with network]" in rendered(block)
        assert any(
            n.startswith("✓ you approved WITH NETWORK run_shell_command") for n in notes(app)
        )
        answer = app.session.last_answer
        assert "reached [" in answer and "reached []" not in answer, answer


@pytest.mark.bwrap
async def test_at_80_columns_the_status_bar_keeps_the_network_while_a_decision_waits(
    sandboxed: Path,
) -> None:
    app = make_app(shell_then_text(["touch x"]), sandboxed, sandbox_choice=bwrap_choice(sandboxed))
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "list")
        await approval_dialog(pilot, app)
        bar = rendered(app.chat.status_bar)
        assert "no net" in bar, bar
        await pilot.press("n")
        await settle(pilot, app)


@pytest.mark.bwrap
async def test_a_bang_command_that_found_no_network_says_how_to_allow_it(sandboxed: Path) -> None:
    app = make_app(shell_then_text([]), sandboxed, sandbox_choice=bwrap_choice(sandboxed))
    async with app.run_test(size=(110, 34)) as pilot:
        await submit(pilot, app, "!curl -sS --max-time 5 https://example.com")
        await settle(pilot, app)
        [block] = app.chat.query(ToolCallBlock)
        assert block.status == "failed"
        text = " ".join(rendered(block).replace("│", " ").split())  # the panel's edges out
        assert "no network: the sandbox gives commands none" in text
        assert "Could not resolve host" in text
        assert "approve it with network (w)" in text


async def test_without_a_sandbox_the_dialog_says_the_network_is_not_held_back(
    tmp_path: Path,
) -> None:
    app = make_app(shell_then_text(["echo hi"]), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        bar = rendered(app.chat.status_bar)
        assert "(none)" in bar and "network" not in bar  # "(none)": nothing is held back
        await submit(pilot, app, "say hi")
        screen = await approval_dialog(pilot, app)
        network = " ".join(rendered(screen.query_one("#approval-network")).split())
        assert (
            "Network: every command reaches whatever this machine reaches (no sandbox)" in network
        )
        assert " w " not in rendered(screen.keys)  # nothing to grant
        await pilot.press("w")  # does nothing
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("n")


def test_status_names_the_network_and_how_to_allow_one_command(tmp_path: Path) -> None:
    rows = {r.name: r for r in sandbox_rows(SandboxChoice(SubprocessSandbox(tmp_path), "x"))}
    assert rows["  network"].value == (
        "host: every command reaches whatever this machine reaches (no sandbox)"
    )
    assert rows["  network"].state == "warn"


@pytest.mark.bwrap
def test_status_of_bubblewrap_says_how_to_allow_one_command(sandboxed: Path) -> None:
    rows = {r.name: r for r in sandbox_rows(bwrap_choice(sandboxed))}
    value = rows["  network"].value
    assert value.startswith("none: commands cannot reach the network")
    assert "approve it with network (w)" in value


async def test_t_denies_with_words_the_model_reads(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["pip install requests"], final="ok"), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "install requests")
        screen = await approval_dialog(pilot, app)
        assert " t  no, and tell it what to do instead" in rendered(screen.keys)
        await pilot.press("t")
        await pilot.pause()
        field = screen.feedback.input
        assert screen.telling and field.has_focus
        assert "enter  deny with these words" in rendered(screen.keys)
        await type_text(pilot, "use uv instead")  # y, n, a… go to the field, deciding nothing
        assert app.screen is screen and field.value == "use uv instead"
        await pilot.press("enter")
        await settle(pilot, app)
        [block] = app.chat.query(ToolCallBlock)
        assert block.status == "denied"
        assert any("you said: “use uv instead”" in n for n in notes(app))
        assert 'in their words: "use uv instead"' in app.session.last_answer


async def test_escape_in_the_words_field_goes_back_to_the_keys(tmp_path: Path) -> None:
    app = make_app(shell_then_text(["rm -rf build"], final="ok"), tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await submit(pilot, app, "clean")
        screen = await approval_dialog(pilot, app)
        await pilot.press("t", "n", "o")
        await pilot.pause()
        assert screen.feedback.input.value == "no"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and not screen.telling
        assert not screen.feedback.display
        await pilot.press("n")
        await settle(pilot, app)
        assert "The user denied this action." in app.session.last_answer
