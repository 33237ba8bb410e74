"""The span viewer: live rows while spans are written, filter, trace tree, details, Escape."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import DataTable, Input, Static, Tree

from co_tui.tui.screens.spans import SpanScreen
from tests.telemetry.spandata import BASE_NS, turn_trace, write

SIZE = (120, 40)


class ChatStandIn(App[None]):
    """A plain screen underneath, so Escape has somewhere to go back to."""

    def __init__(self, screen: SpanScreen) -> None:
        super().__init__()
        self.span_screen = screen

    def compose(self) -> ComposeResult:
        yield Static("chat", id="chat")

    def on_mount(self) -> None:
        self.push_screen(self.span_screen)


async def until(pilot: Any, condition: Callable[[], bool], tries: int = 100) -> None:
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition never became true")


def names(table: DataTable[Any]) -> list[str]:
    return [str(table.get_row_at(i)[1]) for i in range(table.row_count)]


async def test_live_rows_appear_while_spans_are_written(tmp_path: Path) -> None:
    db = tmp_path / "co-tui.db"
    write(db, turn_trace(1))
    screen = SpanScreen(db, poll_interval=0.05)
    async with ChatStandIn(screen).run_test(size=SIZE) as pilot:
        table = screen.table
        await until(pilot, lambda: table.row_count == 8)
        assert names(table)[0] == "chat gemini-2.5-flash"  # newest start first
        # A second turn, ten seconds later, written while the screen is open.
        write(db, turn_trace(2, base_ns=BASE_NS + 10_000_000_000))
        await until(pilot, lambda: table.row_count == 16)
        top = screen._summaries[str(table.coordinate_to_cell_key((0, 0)).row_key.value)]
        assert top.trace_id.endswith("2") and top.start_time > BASE_NS + 10_000_000_000
        starts = [screen._starts[k] for k in (r.value for r in table.rows)]
        ordered = [
            screen._starts[str(table.coordinate_to_cell_key((i, 0)).row_key.value)]
            for i in range(table.row_count)
        ]
        assert ordered == sorted(starts, reverse=True)
        # The UI stayed responsive: typing into the filter still works during polling.
        await pilot.press("f", "t", "u", "r", "n")
        await until(pilot, lambda: names(table) == ["turn", "turn"])


async def test_window_keeps_only_the_newest(tmp_path: Path) -> None:
    db = tmp_path / "co-tui.db"
    write(db, turn_trace(1))
    screen = SpanScreen(db, poll_interval=0.05, window=10)
    async with ChatStandIn(screen).run_test(size=SIZE) as pilot:
        await until(pilot, lambda: screen.table.row_count == 8)
        write(db, turn_trace(2, base_ns=BASE_NS + 10_000_000_000))
        await until(
            pilot, lambda: any(s.trace_id.endswith("2") for s in screen._summaries.values())
        )
        await pilot.pause(0.1)
        assert screen.table.row_count == 10
        assert sum(s.trace_id.endswith("2") for s in screen._summaries.values()) == 8


async def test_filter_by_name_and_status(tmp_path: Path) -> None:
    db = tmp_path / "co-tui.db"
    write(db, turn_trace(1) + turn_trace(2, base_ns=BASE_NS + 5_000_000_000, tool_error=True))
    screen = SpanScreen(db, poll_interval=None)
    async with ChatStandIn(screen).run_test(size=SIZE) as pilot:
        table = screen.table
        await until(pilot, lambda: table.row_count == 16)
        await pilot.press("slash")
        assert isinstance(screen.focused, Input)
        await pilot.press(*"status:error")
        await until(pilot, lambda: names(table) == ["execute_tool run_shell_command"])
        filt = screen.query_one("#spans-filter", Input)
        filt.value = "sandbox"
        await until(pilot, lambda: names(table) == ["sandbox_command", "sandbox_command"])
        filt.value = "chat error"  # a name word and a bare status
        await until(pilot, lambda: table.row_count == 0)
        filt.value = ""
        await until(pilot, lambda: table.row_count == 16)
        await pilot.press("enter")  # Enter in the filter returns to the table
        assert screen.focused is table


async def test_enter_opens_the_trace_tree_and_details(tmp_path: Path) -> None:
    db = tmp_path / "co-tui.db"
    write(db, turn_trace(1, tool_error=True))
    screen = SpanScreen(db, poll_interval=None)
    async with ChatStandIn(screen).run_test(size=SIZE) as pilot:
        table = screen.table
        await until(pilot, lambda: table.row_count == 8)
        # Move to the sandbox command and open its trace.
        target = names(table).index("sandbox_command")
        for _ in range(target):
            await pilot.press("down")
        await pilot.press("enter")
        tree: Tree[Any] = screen.trace_tree
        await until(pilot, lambda: len(tree.root.children) == 1)
        assert screen.focused is tree
        turn = tree.root.children[0]
        assert turn.data.name == "turn"
        assert [c.data.name for c in turn.children] == [
            "invoke_agent co",
            "approval run_shell_command",
            "invoke_agent co",
        ]
        tool = turn.children[2].children[0]
        assert tool.data.name == "execute_tool run_shell_command"
        assert "ms" in str(tool.label)
        assert tool.children[0].data.name == "sandbox_command"
        # The selected span is highlighted, its details shown.
        await until(pilot, lambda: tree.cursor_node is tool.children[0])
        body = screen.query_one("#spans-detail-body", Static)
        await until(pilot, lambda: "co.sandbox.command" in _text(body))
        assert '"ls -la"' in _text(body)
        # Keyboard: up to the tool span shows its JSON-in-a-string arguments and its event.
        await pilot.press("up")
        await until(pilot, lambda: "exception.message" in _text(body))
        assert '"cmd": "ls -la"' in _text(body)  # pretty-printed, not an escaped string
        assert "error" in _text(body) and "exit 2" in _text(body)
        await pilot.press("tab")
        assert screen.focused is screen.query_one("#spans-details")


async def test_escape_goes_back(tmp_path: Path) -> None:
    screen = SpanScreen(tmp_path / "missing.db", poll_interval=0.05)
    app = ChatStandIn(screen)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen is screen)
        title = screen.query_one("#spans-title", Static)
        await until(pilot, lambda: "no spans recorded" in _text(title))
        assert not (tmp_path / "missing.db").exists()  # reading never creates it
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is not screen)
        assert app.query_one("#chat")


def _text(widget: Static) -> str:
    from rich.console import Console

    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(widget.content)
    return console.export_text()
