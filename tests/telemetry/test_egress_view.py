"""What left this machine: egress spans recorded where outbound calls happen (a real turn with
a real fetch and the local web server), the span viewer's "left this machine" view (`e`),
and the same table on the `co-tui traces` page."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from co_tui.config.settings import Settings
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.telemetry import Telemetry
from co_tui.telemetry.html import render_trace_html
from co_tui.telemetry.queries import egress_calls, trace_spans
from co_tui.tui.screens.spans import SpanScreen
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps
from tests.telemetry.conftest import rows
from tests.telemetry.spandata import BASE_NS, span, turn_trace, write
from tests.telemetry.test_viewer import ChatStandIn, until
from tests.web.server import WebServer

NOTE = "Projects/plan.md"
SIZE = (140, 40)


@pytest.fixture
def site() -> Iterator[WebServer]:
    server = WebServer().start()
    yield server
    server.stop()


async def fetch_after_note(tmp_path: Path, site: WebServer, url: str) -> None:
    vault = tmp_path / "vault"
    (vault / "Projects").mkdir(parents=True)
    (vault / NOTE).write_text("The plan: ship it.\n", encoding="utf-8")
    settings = Settings(obsidian_vault_path=str(vault), web_fetch_private_hosts=["127.0.0.1"])
    model = ScriptedModel(
        [Call("read_note", {"filename": NOTE}, "r1")],
        [Call("web_fetch", {"url": url}, "f1")],
        ["done"],
    )
    result = await run_turn(
        make_bundle(model.model, settings).agent,
        "read my plan, then fetch the page",
        deps=make_deps(tmp_path, settings),
        history=[],
        frontend=RecordingFrontend([ApprovalDecision.APPROVE]),  # the guard asks: approved
    )
    assert result.ok


def cells(screen: SpanScreen, row: int) -> list[str]:
    return [str(cell) for cell in screen.egress_table.get_row_at(row)]


async def test_the_view_lists_a_fetch_with_destination_bytes_and_sources(
    tmp_path: Path, site: WebServer, telemetry: Telemetry, db_path: Path
) -> None:
    url = f"{site.url}/plain?d=ship-it"
    await fetch_after_note(tmp_path, site, url)
    assert site.hits == ["/plain"]
    telemetry.flush()
    screen = SpanScreen(db_path, poll_interval=None)
    async with ChatStandIn(screen).run_test(size=SIZE) as pilot:
        await until(pilot, lambda: screen.table.row_count > 0)
        assert not screen.egress_table.display
        await pilot.press("e")
        await until(pilot, lambda: screen.egress_table.row_count == 1)
        assert screen.egress_table.display and not screen.table.display
        turn, tool, destination, sent, sources = cells(screen, 0)
        assert turn  # the turn's time, on its first call
        assert (tool, destination) == ("web_fetch", "127.0.0.1")
        assert sent == f"{len(url.encode()):,} B"
        assert sources == f"note {NOTE}"
        title = str(screen.query_one("#spans-title").render())
        assert "left this machine" in title
        # Enter opens the call's trace, with the egress span selected.
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.trace_tree.root.children))
        await until(
            pilot,
            lambda: (
                screen.trace_tree.cursor_node is not None
                and screen.trace_tree.cursor_node.data is not None
                and screen.trace_tree.cursor_node.data.name == "egress web_fetch"
            ),
        )
        await pilot.press("e")  # back to the spans
        await until(pilot, lambda: bool(screen.table.display))


async def test_the_span_is_nested_where_the_call_happened(
    tmp_path: Path, site: WebServer, telemetry: Telemetry, db_path: Path
) -> None:
    url = f"{site.url}/redirect?to=/plain"
    await fetch_after_note(tmp_path, site, url)
    telemetry.flush()
    [egress] = rows(db_path, "SELECT * FROM spans WHERE name = 'egress web_fetch'")
    [parent] = rows(db_path, "SELECT name FROM spans WHERE id = ?", (egress["parent_id"],))
    assert parent["name"] == "execute_tool web_fetch"
    [call] = egress_calls(sqlite3.connect(db_path))
    assert call.destinations == ("127.0.0.1",) and call.sources == (f"note {NOTE}",)
    # The redirect was one more request: its URL counts too.
    assert call.bytes_sent == len(url) + len(f"{site.url}/plain")
    assert call.outcome == "sent"


def egress_span(trace: int, span_id: int, parent: int, start_ms: float, **attrs: Any) -> Any:
    attributes = {
        "co.egress.tool": attrs.get("tool", "web_fetch"),
        "co.egress.destination": attrs.get("destination", "example.org"),
        "co.egress.destinations": [attrs.get("destination", "example.org")],
        "co.egress.bytes": attrs.get("size", 40),
        "co.egress.sources": attrs.get("sources", []),
        "co.egress.outcome": attrs.get("outcome", "sent"),
    }
    return span(
        f"egress {attributes['co.egress.tool']}", trace, span_id, parent, start_ms, 5, attributes
    )


def test_calls_are_grouped_by_turn_newest_turn_first(tmp_path: Path) -> None:
    db = tmp_path / "co-tui.db"
    later = BASE_NS + 60_000_000_000
    slack = egress_span(
        1, 151, 101, 300, tool="post_slack_message", destination="Slack #general", size=12
    )
    first = [*turn_trace(1), egress_span(1, 150, 101, 200, sources=["note a.md"]), slack]
    second = [
        *turn_trace(2, base_ns=later),
        egress_span(2, 250, 201, 60_100, tool="web_search", outcome="failed"),
    ]
    write(db, first + second)
    conn = sqlite3.connect(db)
    calls = egress_calls(conn)
    assert [c.tool for c in calls] == ["web_search", "web_fetch", "post_slack_message"]
    assert calls[0].outcome == "failed" and calls[1].sources == ("note a.md",)
    assert calls[1].turn_start == calls[2].turn_start == BASE_NS
    page = render_trace_html(calls[1].trace_id, trace_spans(conn, calls[1].trace_id))
    assert "<h2>Left this machine</h2>" in page
    assert "Slack #general" in page and "note a.md" in page and "12 B" in page
    empty = render_trace_html("00", [])
    assert "nothing: no outbound calls in this trace" in empty


async def test_an_empty_view_says_so(tmp_path: Path) -> None:
    db = tmp_path / "co-tui.db"
    write(db, turn_trace(1))
    screen = SpanScreen(db, poll_interval=None)
    async with ChatStandIn(screen).run_test(size=SIZE) as pilot:
        await until(pilot, lambda: screen.table.row_count == 8)
        await pilot.press("e")
        await until(pilot, lambda: "0 calls" in str(screen.query_one("#spans-title").render()))
        assert screen.egress_table.row_count == 0
