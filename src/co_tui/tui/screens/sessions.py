"""The sessions screen: stored conversations, newest first. Enter opens one; / searches;
d deletes (after a confirmation); Escape goes back. Dismisses with the chosen session id."""

from __future__ import annotations

import asyncio
import functools

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Input, Static

from co_tui.sessions import SessionInfo, SessionStore

LIST_LIMIT = 500


def _row(info: SessionInfo, here: str) -> tuple[Text, str, str, Text]:
    title = Text(info.title or "(untitled)")
    if info.has_pending:
        title.append("  waiting for approval", style="yellow")
    if not info.readable:
        title.append("  unreadable format", style="red")
    where = Text("here" if info.cwd == here else info.cwd, style="dim")
    return title, info.age(), str(info.turns), where


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__(classes="confirm-screen")
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(self.question, markup=False, id="confirm-question")
            yield Static(Text(" y  delete    n  keep", style="bold"), id="confirm-keys")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class SessionsScreen(ModalScreen[str | None]):
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("escape", "close", "Back"),
        Binding("slash", "search", "Search"),
        Binding("d,delete", "delete", "Delete"),
    ]
    DEFAULT_CSS = """
    SessionsScreen { align: center middle; }
    #sessions-dialog { width: 90%; height: 80%; border: round $accent; background: $surface; }
    #sessions-table { height: 1fr; }
    #sessions-empty { color: $text-muted; padding: 1 2; }
    ConfirmScreen { align: center middle; }
    #confirm-dialog { width: 60; height: auto; border: round $error; background: $surface;
                      padding: 1 2; }
    """

    def __init__(self, store: SessionStore, here: str) -> None:
        super().__init__(classes="sessions-screen")
        self.store = store
        self.here = here
        self.sessions: list[SessionInfo] = []
        self.table: DataTable[object] = DataTable(cursor_type="row", id="sessions-table")
        self.search_box = Input(placeholder="search titles…", id="sessions-search")
        self.empty = Static("No stored sessions.", id="sessions-empty")

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-dialog"):
            yield Static(Text("Sessions", style="bold"), id="sessions-title")
            yield self.search_box
            yield self.table
            yield self.empty
        yield Footer()

    def on_mount(self) -> None:
        self.table.add_columns("Title", "Age", "Turns", "Directory")
        self.empty.display = False
        self.table.focus()
        self.reload()

    @work(exclusive=True, group="sessions-list", exit_on_error=False)
    async def reload(self) -> None:
        query = self.search_box.value.strip()
        found = await asyncio.to_thread(
            functools.partial(self.store.list, None, query, LIST_LIMIT, include_headless=False)
        )
        self.sessions = found
        self.table.clear()
        for info in found:
            self.table.add_row(*_row(info, self.here), key=info.id)
        self.empty.display = not found
        self.empty.update("No session matches." if query else "No stored sessions.")

    @on(Input.Changed, "#sessions-search")
    def _search_changed(self) -> None:
        self.reload()

    @on(Input.Submitted, "#sessions-search")
    def _search_done(self) -> None:
        self.table.focus()

    @on(DataTable.RowSelected, "#sessions-table")
    def _open(self, event: DataTable.RowSelected) -> None:
        self.dismiss(str(event.row_key.value))

    def selected(self) -> SessionInfo | None:
        if not self.sessions or self.table.cursor_row < 0:
            return None
        index = min(self.table.cursor_row, len(self.sessions) - 1)
        return self.sessions[index]

    def action_search(self) -> None:
        self.search_box.focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_delete(self) -> None:
        if self.focused is self.search_box:
            return
        info = self.selected()
        if info is None:
            return

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._delete(info.id)

        question = f"Delete the session “{info.title or info.id[:8]}” ({info.turns} turns)?"
        self.app.push_screen(ConfirmScreen(question), done)

    @work(group="sessions-delete", exit_on_error=False)
    async def _delete(self, session_id: str) -> None:
        await asyncio.to_thread(self.store.delete, session_id)
        self.notify("Session deleted.", timeout=2)
        self.reload()
