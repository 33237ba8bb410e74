"""Attack: escape sequences in an argument rewrote what the dialog showed —
`touch PWNED; # \x1b[2K\x1b[1Gls -la` looked like `ls -la`, and y ran the touch. Now every
hidden character is shown as a highlighted escape, with a warning, and no escape sequence
from a tool argument or result reaches the terminal."""

from __future__ import annotations

from pathlib import Path

from rich.style import Style
from textual.widget import Widget

from co_tui.tui.render.visible_text import ESCAPE_STYLE
from co_tui.tui.widgets.items import Note
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.tui.helpers import (
    SIZE,
    approval_dialog,
    make_app,
    on_screen,
    rendered,
    settle,
    shell_then_text,
)

SPOOF = "touch PWNED; # \x1b[2K\x1b[1Gls -la"
SHOWN = "touch PWNED; # \\x1b[2K\\x1b[1Gls -la"


def escape_cells(widget: Widget) -> list[str]:
    """The pieces of text drawn reversed (the escape style) inside `widget`."""
    return [
        segment.text
        for strip in on_screen(widget)
        for segment in strip
        if segment.style is not None and segment.style.reverse
    ]


async def test_escape_sequences_in_a_command_are_shown_not_run(tmp_path: Path) -> None:
    app = make_app(shell_then_text([SPOOF], final="ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.prompt.text = "list the files"
        await pilot.press("enter")
        screen = await approval_dialog(pilot, app)
        await pilot.pause()
        args = rendered(screen.args_view)
        assert SHOWN in args
        assert "\x1b" not in args
        assert "\\x1b" in "".join(escape_cells(screen.args_view))
        warning = rendered(screen.query_one("#approval-warning"))
        assert "hidden characters" in warning and "\\x1b" in warning
        # Behind the dialog: the inline call and the sidebar show the escapes too.
        assert SHOWN in app.chat.query_one(ToolCallBlock)._line_text().plain
        assert "\x1b" not in rendered(app.chat.sidebar)

        await pilot.press("n")
        await settle(pilot, app)
        assert not (tmp_path / "PWNED").exists()
        (decision,) = [
            w
            for w in app.chat.transcript.items
            if isinstance(w, Note) and "denied" in str(w._source)
        ]
        assert SHOWN in str(decision._source)
        for widget in app.chat.transcript.items:
            assert "\x1b" not in rendered(widget)


async def test_hidden_characters_in_a_result_are_shown(tmp_path: Path) -> None:
    # An OSC 52 sequence (writes the clipboard) and a right-to-left override.
    printf = "printf 'safe\\033]52;c;cHduZWQ=\\033\\\\ \\342\\200\\256 done'"
    app = make_app(shell_then_text([printf], final="ok"), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.prompt.text = "print"
        await pilot.press("enter")
        await approval_dialog(pilot, app)
        await pilot.press("y")
        await settle(pilot, app)
        block = app.chat.query_one(ToolCallBlock)
        assert block.status == "ok"
        shown = rendered(block)
        assert "safe\\x1b]52;c;cHduZWQ=\\x1b\\ \\u202e done" in shown
        assert "\x1b" not in shown and "\u202e" not in shown
        assert "\x1b" in app.session.last_answer  # the model got the output as it is
        assert "\x1b" not in rendered(app.chat.transcript)


def test_a_backslash_typed_literally_is_told_apart() -> None:
    from co_tui.tui.widgets.args_view import value_text

    real = value_text("run_shell_command", "cmd", "a\x1bb")
    typed = value_text("run_shell_command", "cmd", "a\\x1bb")
    assert real.plain == typed.plain == "a\\x1bb"
    escape = Style.parse(ESCAPE_STYLE)

    def styled(text: object) -> bool:
        return any(
            Style.parse(str(span.style)).reverse
            and Style.parse(str(span.style)).color == escape.color
            for span in text.spans  # type: ignore[attr-defined]
        )

    assert styled(real) and not styled(typed)
