"""The sessions screen: stored conversations, newest first. Enter opens one; / searches;
d deletes (after a confirmation); Escape goes back. Dismisses with the chosen session id.

Deleting the conversation that is open now posts `CurrentSessionDeleted`: the app goes on in
a new, empty session, so nothing saves the deleted one again. `co-tui -p` sessions are not
listed (`co-tui sessions --all` shows them)."""

from __future__ import annotations

import asyncio
import functools

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from co_tui.store.errors import SessionStoreError
from co_tui.store.records import SessionInfo
from co_tui.store.session_store import SessionStore
from co_tui.tui.screens.confirm import ConfirmScreen
from co_tui.tui.widgets.keys_footer import KeysFooter

__all__ = ["ConfirmScreen", "CurrentSessionDeleted", "SessionsScreen"]

LIST_LIMIT = 500


class CurrentSessionDeleted(Message):
    """The session open in the app was deleted: the app starts a new one."""


def _row(info: SessionInfo, here: str, current: str) -> tuple[Text, str, str, Text]:
    title = Text(info.title or "(untitled)")
    if info.id == current:
        title.append("  open now", style="bold")
    if info.has_pending:
        title.append("  waiting for approval", style="yellow")
    if not info.readable:
        title.append("  unreadable format", style="red")
    where = Text("here" if info.cwd == here else info.cwd, style="dim")
    return title, info.age(), str(info.turns), where


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
    """

    def __init__(self, store: SessionStore, here: str, current: str = "") -> None:
        super().__init__(classes="sessions-screen")
        self.store = store
        self.here = here
        self.current = current  # the session open in the app
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
        yield KeysFooter()

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
            self.table.add_row(*_row(info, self.here, self.current), key=info.id)
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

        turns = "1 turn" if info.turns == 1 else f"{info.turns} turns"
        details = f"{turns}, last used {info.age()}. Its messages are deleted for good."
        if info.id == self.current:
            details += " It is the conversation open now: a new, empty session takes its place."
        question = f"Delete “{info.title or info.id[:8]}”?"
        self.app.push_screen(ConfirmScreen(question, details, title="Delete session"), done)

    @work(group="sessions-delete", exit_on_error=False)
    async def _delete(self, session_id: str) -> None:
        try:
            await asyncio.to_thread(self.store.delete, session_id)
        except SessionStoreError as exc:
            self.notify(str(exc), severity="error", timeout=8)
            self.reload()
            return
        if session_id == self.current:
            self.current = ""
            self.app.post_message(CurrentSessionDeleted())
        self.notify("Session deleted.", timeout=2)
        self.reload()
