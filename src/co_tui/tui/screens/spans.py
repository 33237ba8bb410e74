"""The span viewer: recent spans, live; a trace as a tree; a span's attributes and events.

`e` switches the table to "left this machine": per turn, each call that sent data off this
machine (web fetches and searches, Slack posts, Gmail drafts, calls to MCP servers that are
not local) with its destination, the bytes it sent and the private or untrusted sources in
the conversation at the time; Enter opens its trace. `e` again goes back to the spans.

All database reads run in thread workers (the poll reads only `rowid > last`), and the table
holds a window of the newest spans, never the whole table. Escape goes back to the chat.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.json import JSON
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static, Tree
from textual.widgets.tree import TreeNode

from co_tui.telemetry.queries import (
    EgressCall,
    SpanDetail,
    SpanFilter,
    SpanSummary,
    build_tree,
    egress_calls,
    expand_json,
    max_rowid,
    recent_spans,
    spans_after,
    trace_spans,
)
from co_tui.telemetry.store import default_db_path, open_for_reading
from co_tui.tui.widgets.keys_footer import KeysFooter

WINDOW = 200  # rows the table keeps: the newest by start time
POLL_S = 0.25
MAX_SHOWN_CHARS = 20_000  # one attribute value in the details pane
STATUS_STYLE = {"ERROR": ("error", "bold red"), "OK": ("ok", "green"), "UNSET": ("·", "dim")}


class TimeCell:
    """A start-time cell: shows local wall time, sorts by nanoseconds."""

    __slots__ = ("start_ns",)

    def __init__(self, start_ns: int) -> None:
        self.start_ns = start_ns

    def __str__(self) -> str:
        return datetime.fromtimestamp(self.start_ns / 1e9).strftime("%H:%M:%S.%f")[:-3]


def format_duration(ms: float | None) -> str:
    if ms is None:
        return "…"
    if ms < 1:
        return f"{ms * 1000:.0f} µs"
    if ms < 1000:
        return f"{ms:.1f} ms"
    return f"{ms / 1000:.2f} s"


def status_text(code: str) -> Text:
    label, style = STATUS_STYLE.get(code, (code.lower(), ""))
    return Text(label, style=style)


def span_details(span: SpanDetail) -> RenderableType:
    head = Text()
    head.append(span.name, style="bold")
    head.append("  ")
    head.append_text(status_text(span.status_code))
    if span.status_description:
        head.append(f" {span.status_description}", style="red")
    head.append(f"\n{format_duration(span.duration_ms)}", style="cyan")
    head.append(f"  {span.kind or ''}  span {span.id}  trace {span.trace_id}", style="dim")
    if span.parent_id:
        head.append(f"  parent {span.parent_id}", style="dim")
    attributes = {k: expand_json(v, MAX_SHOWN_CHARS) for k, v in sorted(span.attributes.items())}
    parts: list[RenderableType] = [head, Text("\nattributes", style="bold underline")]
    parts.append(JSON.from_data(attributes, indent=2, default=str))
    if span.events:
        parts.append(Text("\nevents", style="bold underline"))
        parts.append(JSON.from_data(span.events, indent=2, default=str))
    return Group(*parts)


def egress_cells(call: EgressCall, first_of_turn: bool) -> tuple[Text, ...]:
    """One row of the "left this machine" table: the turn's time on its first call only."""
    turn = TimeCell(call.turn_start) if first_of_turn else ""
    size = f"{call.bytes_sent:,} B"
    if call.outcome != "sent":
        size += f" ({call.outcome})"
    sources = "; ".join(call.sources) if call.sources else "none"
    return (
        Text(str(turn), style="bold"),
        Text(call.tool, overflow="ellipsis", no_wrap=True),
        Text(", ".join(call.destinations), overflow="ellipsis", no_wrap=True),
        Text(size, justify="right", style="" if call.outcome == "sent" else "dim"),
        Text(sources, overflow="ellipsis", no_wrap=True, style="yellow" if call.sources else "dim"),
    )


# (label, key, width): the spans table, and the "left this machine" table.
SPAN_COLUMNS = (
    ("time", "time", 12),
    ("name", "name", 34),
    ("duration", "duration", 10),
    ("status", "status", 6),
    ("model", "model", 20),
    ("tokens", "tokens", 7),
)
EGRESS_COLUMNS = (
    ("turn", "turn", 12),
    ("tool", "tool", 20),
    ("destination", "destination", 24),
    ("sent", "sent", 14),
    ("sources in the conversation", "sources", 40),
)


def _table(
    table_id: str, columns: tuple[tuple[str, str, int], ...], **kwargs: Any
) -> DataTable[Any]:
    table: DataTable[Any] = DataTable(id=table_id, cursor_type="row", **kwargs)
    for label, key, width in columns:
        table.add_column(label, key=key, width=width)
    return table


def _node_label(span: SpanDetail) -> Text:
    label = Text(span.name, style="bold red" if span.status_code == "ERROR" else "")
    label.append(f"  {format_duration(span.duration_ms)}", style="cyan")
    return label


class SpanScreen(Screen[None]):
    """Open with F2 or /spans. Enter on a span opens its trace; Escape returns to the chat."""

    DEFAULT_CSS = """
    SpanScreen { layout: vertical; }
    SpanScreen #spans-title { height: 1; padding: 0 1; background: $panel; }
    SpanScreen #spans-filter { height: 3; }
    SpanScreen #spans-table, SpanScreen #spans-egress { height: 1fr; min-height: 5; }
    SpanScreen #spans-lower { height: 1fr; }
    SpanScreen #spans-tree { width: 2fr; border: round $primary-muted; }
    SpanScreen #spans-details { width: 3fr; border: round $primary-muted; padding: 0 1; }
    SpanScreen #spans-tree:focus, SpanScreen #spans-details:focus { border: round $accent; }
    """
    BINDINGS = [  # noqa: RUF012 - Textual's declaration style
        Binding("escape", "back", "Back to chat"),
        Binding("slash,f", "focus_filter", "Filter"),
        Binding("t", "focus_table", "Spans"),
        Binding("e", "toggle_egress", "Left this machine"),
        Binding("ctrl+r", "reload", "Reload", show=False),
    ]

    def __init__(
        self,
        db_path: Path | None = None,
        *,
        initial_filter: str = "",
        window: int = WINDOW,
        poll_interval: float | None = POLL_S,
    ) -> None:
        super().__init__()
        self.db_path = db_path or default_db_path()
        self.window = window
        self.poll_interval = poll_interval
        self._filter_text = initial_filter
        self._filter = SpanFilter.parse(initial_filter)
        self._generation = 0  # bumped by every reload: late poll results are dropped
        self._last_rowid = 0
        self._polling = False
        self._starts: dict[str, int] = {}
        self._summaries: dict[str, SpanSummary] = {}
        self._egress: dict[str, EgressCall] = {}
        self.showing_egress = False
        self.trace_id: str | None = None

    # -- layout --
    def compose(self) -> ComposeResult:
        yield Static("spans", id="spans-title")
        yield Input(
            self._filter_text,
            placeholder="filter: words in the span name; status:error | status:ok",
            id="spans-filter",
        )
        yield _table("spans-table", SPAN_COLUMNS, zebra_stripes=True)
        egress = _table("spans-egress", EGRESS_COLUMNS)
        egress.display = False
        yield egress
        with Horizontal(id="spans-lower"):
            tree: Tree[SpanDetail | None] = Tree(
                "(Enter on a span shows its trace)", id="spans-tree"
            )
            tree.show_root = True
            yield tree
            with VerticalScroll(id="spans-details", can_focus=True):
                yield Static("", id="spans-detail-body")
        yield KeysFooter()

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#spans-table", DataTable)

    @property
    def egress_table(self) -> DataTable[Any]:
        return self.query_one("#spans-egress", DataTable)

    @property
    def trace_tree(self) -> Tree[SpanDetail | None]:
        return self.query_one("#spans-tree", Tree)

    def on_mount(self) -> None:
        self.table.focus()
        self.reload()
        if self.poll_interval:
            self.set_interval(self.poll_interval, self._tick)

    # -- loading and polling --
    def reload(self) -> None:
        self._generation += 1
        self._load_page(self._generation, self._filter)

    def _read(self, fn: Callable[[Any], Any]) -> Any:
        conn = open_for_reading(self.db_path)
        if conn is None:
            return None
        try:
            return fn(conn)
        finally:
            conn.close()

    def _hand_back(self, fn: Callable[..., Any], *args: Any) -> None:
        with contextlib.suppress(Exception):  # the app is closing: nothing to show any more
            self.app.call_from_thread(fn, *args)

    @work(thread=True, group="spans-load", exclusive=True, exit_on_error=False)
    def _load_page(self, generation: int, span_filter: SpanFilter) -> None:
        result = self._read(lambda c: (max_rowid(c), recent_spans(c, self.window, span_filter)))
        top, rows = result if result is not None else (0, [])
        self._hand_back(self._show_page, generation, top, rows, result is not None)

    def _tick(self) -> None:
        if not self._polling:
            self._polling = True
            self._poll(self._generation, self._last_rowid, self._filter)

    @work(thread=True, group="spans-poll", exit_on_error=False)
    def _poll(self, generation: int, last: int, span_filter: SpanFilter) -> None:
        def read(conn: Any) -> tuple[int, list[SpanSummary] | None]:
            top = max_rowid(conn)
            if top <= last:
                return top, []
            if top - last > self.window * 4:  # a burst: the newest page says it all
                return top, None
            return top, spans_after(conn, last, self.window * 4, span_filter, upto=top)

        try:
            result = self._read(read)
        except Exception:
            result = None
        self._hand_back(self._apply_poll, generation, result)

    def _apply_poll(self, generation: int, result: tuple[int, list[SpanSummary] | None]) -> None:
        self._polling = False
        if generation != self._generation or result is None:
            if result is None and not self._summaries and self.db_path.exists():
                self.reload()  # the database appeared since the first load
            return
        top, rows = result
        if rows is None:
            self.reload()
            return
        self._last_rowid = max(self._last_rowid, top)
        if rows:
            self._add_rows(rows)
            if self.showing_egress:
                self._load_egress()
        self._update_title(exists=True)

    def _show_page(self, generation: int, top: int, rows: list[SpanSummary], exists: bool) -> None:
        if generation != self._generation:
            return
        table = self.table
        table.clear()
        self._starts.clear()
        self._summaries.clear()
        self._last_rowid = top
        self._add_rows(rows)
        if table.row_count:
            table.move_cursor(row=0)
        self._update_title(exists)

    def _add_rows(self, rows: list[SpanSummary]) -> None:
        table = self.table
        current = self._current_key()
        added = False
        for row in rows:
            if row.id in self._starts:
                continue
            self._starts[row.id] = row.start_time
            self._summaries[row.id] = row
            table.add_row(
                TimeCell(row.start_time),
                Text(row.name, overflow="ellipsis", no_wrap=True),
                Text(format_duration(row.duration_ms), justify="right"),
                status_text(row.status_code),
                Text(row.model or "", overflow="ellipsis", no_wrap=True),
                Text(f"{row.tokens:,}" if row.tokens else "", justify="right"),
                key=row.id,
            )
            added = True
        if not added:
            return
        table.sort("time", key=lambda cell: cell.start_ns, reverse=True)
        if len(self._starts) > self.window:
            for key in sorted(self._starts, key=self._starts.__getitem__)[: -self.window]:
                table.remove_row(key)
                del self._starts[key]
                del self._summaries[key]
        if current is not None and current in self._starts:
            table.move_cursor(row=table.get_row_index(current))

    def _current_key(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        try:
            return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        except Exception:
            return None

    def _update_title(self, exists: bool) -> None:
        title = Text()
        title.append("spans", style="bold")
        if self.showing_egress:
            title = Text("left this machine", style="bold")
            title.append(f"   {len(self._egress)} calls (newest turn first)", style="dim")
            title.append("   e: back to the spans", style="dim")
        elif not exists:
            title.append(
                "   no spans recorded yet (telemetry may be off: telemetry_enabled)", style="dim"
            )
        else:
            title.append(f"   {len(self._starts)} shown (newest first)", style="dim")
            if self._filter_text.strip():
                title.append(f"   filter: {self._filter_text.strip()}", style="yellow")
            if self.poll_interval:
                title.append("   live", style="green")
        if self.trace_id:
            title.append(f"   trace {self.trace_id[:16]}", style="cyan")
        self.query_one("#spans-title", Static).update(title)

    # -- filter --
    @on(Input.Changed, "#spans-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._filter_text = event.value
        self._filter = SpanFilter.parse(event.value)
        self.reload()

    @on(Input.Submitted, "#spans-filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    # -- trace tree and details --
    @on(DataTable.RowSelected, "#spans-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        summary = self._summaries.get(str(event.row_key.value))
        if summary is not None:
            self.open_trace(summary.trace_id, summary.id)

    @on(DataTable.RowSelected, "#spans-egress")
    def _egress_selected(self, event: DataTable.RowSelected) -> None:
        call = self._egress.get(str(event.row_key.value))
        if call is not None:
            self.open_trace(call.trace_id, call.span_id)

    # -- left this machine --
    def action_toggle_egress(self) -> None:
        self.showing_egress = not self.showing_egress
        self.table.display = not self.showing_egress
        self.egress_table.display = self.showing_egress
        (self.egress_table if self.showing_egress else self.table).focus()
        if self.showing_egress:
            self._load_egress()
        self._update_title(exists=True)

    @work(thread=True, group="spans-egress", exclusive=True, exit_on_error=False)
    def _load_egress(self) -> None:
        calls = self._read(lambda c: egress_calls(c, self.window)) or []
        self._hand_back(self._show_egress, calls)

    def _show_egress(self, calls: list[EgressCall]) -> None:
        table = self.egress_table
        current = self._current_egress_key()
        table.clear()
        self._egress = {c.span_id: c for c in calls}
        previous = None
        for call in calls:
            table.add_row(*egress_cells(call, call.trace_id != previous), key=call.span_id)
            previous = call.trace_id
        if current in self._egress:
            table.move_cursor(row=table.get_row_index(current))
        self._update_title(exists=True)

    def _current_egress_key(self) -> str | None:
        table = self.egress_table
        if not table.row_count:
            return None
        try:
            return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        except Exception:
            return None

    def open_trace(self, trace_id: str, span_id: str | None = None) -> None:
        self._load_trace(trace_id, span_id)

    @work(thread=True, group="spans-trace", exclusive=True, exit_on_error=False)
    def _load_trace(self, trace_id: str, span_id: str | None) -> None:
        spans = self._read(lambda c: trace_spans(c, trace_id)) or []
        self._hand_back(self._show_trace, trace_id, spans, span_id)

    def _show_trace(self, trace_id: str, spans: list[SpanDetail], span_id: str | None) -> None:
        self.trace_id = trace_id
        tree = self.trace_tree
        tree.clear()
        roots = build_tree(spans)
        total = sum(s.duration_ms or 0 for s in roots)
        tree.root.set_label(
            Text(f"trace {trace_id[:16]}  {len(spans)} spans  {format_duration(total)}")
        )
        tree.root.data = None
        selected: TreeNode[SpanDetail | None] | None = None

        def add(parent: TreeNode[SpanDetail | None], span: SpanDetail) -> None:
            nonlocal selected
            node = parent.add(
                _node_label(span), data=span, expand=True, allow_expand=bool(span.children)
            )
            if span.id == span_id:
                selected = node
            for child in span.children:
                add(node, child)

        for root in roots:
            add(tree.root, root)
        tree.root.expand()
        self._update_title(exists=True)
        tree.focus()
        target = selected or (tree.root.children[0] if tree.root.children else None)
        if target is not None:
            self.call_after_refresh(self._select_node, target)

    def _select_node(self, node: TreeNode[SpanDetail | None]) -> None:
        self.trace_tree.move_cursor(node)
        if node.data is not None:
            self.show_details(node.data)

    @on(Tree.NodeHighlighted, "#spans-tree")
    def _node_highlighted(self, event: Tree.NodeHighlighted[SpanDetail | None]) -> None:
        if event.node.data is not None:
            self.show_details(event.node.data)

    def show_details(self, span: SpanDetail) -> None:
        self.query_one("#spans-detail-body", Static).update(span_details(span))
        self.query_one("#spans-details", VerticalScroll).scroll_home(animate=False)

    # -- actions --
    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def action_focus_filter(self) -> None:
        self.query_one("#spans-filter", Input).focus()

    def action_focus_table(self) -> None:
        (self.egress_table if self.showing_egress else self.table).focus()

    def action_reload(self) -> None:
        self.reload()
