"""What a tool shows under its call in the transcript comes from the `ToolDisplay` it returns
(typed metadata the model never sees); the model still reads the result it always did. A
session stored before displays were typed shows its tools' text when it is resumed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from co_tui.protocol.tool_display import ToolDisplay
from co_tui.store.session_store import SessionStore
from co_tui.tui.app import CoApp
from co_tui.tui.widgets.tool_call import ToolCallBlock
from tests.helpers import tool_returns
from tests.sessions.test_resume_pilot import make_app
from tests.tui.helpers import SIZE, drawn, last_tool_returns, rendered, settle, wait_until


def calling(tool: str, args: dict[str, Any]) -> Any:
    """A model that calls `tool` once, then answers."""

    async def fn(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if last_tool_returns(messages):
            yield "done"
            return
        yield {0: DeltaToolCall(name=tool, json_args=json.dumps(args), tool_call_id="t1")}

    return fn


async def run_prompt(pilot: Any, app: CoApp, text: str) -> ToolCallBlock:
    assert await app.wait_ready()
    app.chat.prompt.text = text
    await pilot.press("enter")
    await settle(pilot, app)
    block = app.chat.transcript.query_one(ToolCallBlock)
    await wait_until(pilot, lambda: block.is_settled, "the call's result")
    return block


async def test_a_tools_display_reaches_the_transcript_and_the_model_reads_the_same(
    tmp_path: Path,
) -> None:
    app = make_app(calling("list_memories", {}), tmp_path, tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        block = await run_prompt(pilot, app, "what do you remember?")
        shown = rendered(block)
        assert block.status == "ok"
        assert "No memories saved yet." in shown
        assert '"count"' not in shown  # the display, not the result's JSON
        (part,) = tool_returns(app.session.history)
    assert part.metadata == ToolDisplay("No memories saved yet.", count=0)
    # What the model is sent is the result as before, display text included.
    assert part.model_response_str() == (
        '{"display":"No memories saved yet.","count":0,"has_more":false}'
    )


async def test_a_terminal_error_shows_as_a_failed_call_with_its_message(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/admin"  # refused before any request: a loopback address
    app = make_app(calling("web_fetch", {"url": url}), tmp_path, tmp_path / "s.db")
    async with app.run_test(size=SIZE) as pilot:
        block = await run_prompt(pilot, app, "fetch the admin page")
        assert block.status == "failed"
        shown = rendered(block)
        assert "web_fetch refused" in shown and "loopback address" in shown
        assert '"refused"' not in shown
        (part,) = tool_returns(app.session.history)
    assert isinstance(part.metadata, ToolDisplay) and part.metadata.error
    sent = json.loads(part.model_response_str())
    assert sent == {"display": part.metadata.text, "error": True, "refused": True}


async def test_a_resumed_session_shows_its_tools_display(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    first = make_app(calling("list_memories", {}), tmp_path, db)
    async with first.run_test(size=SIZE) as pilot:
        await run_prompt(pilot, first, "what do you remember?")
        first.exit()

    second = make_app(calling("list_memories", {}), tmp_path, db, continue_latest=True)
    async with second.run_test(size=SIZE) as pilot:
        assert await second.wait_ready()
        await wait_until(
            pilot, lambda: bool(second.chat.transcript.query(ToolCallBlock)), "the restored call"
        )
        await drawn(pilot, second)
        block = second.chat.transcript.query_one(ToolCallBlock)
        assert block.status == "ok" and "No memories saved yet." in rendered(block)
        (part,) = tool_returns(second.session.history)
        assert part.metadata == ToolDisplay("No memories saved yet.", count=0)  # typed again


# A session as co-tui stored it before displays were typed: the display is only in the
# content the model read (`"metadata": null`), the error flag beside it.
OLD_SESSION = """[
 {"parts": [{"content": "check my notes", "timestamp": "2026-11-01T09:00:00Z",
             "part_kind": "user-prompt"}],
  "instructions": "test", "kind": "request"},
 {"parts": [{"tool_name": "search_notes", "args": {"query": "budget"}, "tool_call_id": "n1",
             "part_kind": "tool-call"},
            {"tool_name": "web_fetch", "args": {"url": "https://example.com/x"},
             "tool_call_id": "w1", "part_kind": "tool-call"}],
  "model_name": "fn", "timestamp": "2026-11-01T09:00:01Z", "kind": "response"},
 {"parts": [{"tool_name": "search_notes", "tool_call_id": "n1", "metadata": null,
             "content": {"display": "2 notes match \\"budget\\"", "count": 2, "page": 1,
                         "has_more": false, "results": []},
             "timestamp": "2026-11-01T09:00:02Z", "part_kind": "tool-return"},
            {"tool_name": "web_fetch", "tool_call_id": "w1", "metadata": null,
             "content": {"display": "web_fetch failed: HTTP 404.", "error": true},
             "timestamp": "2026-11-01T09:00:02Z", "part_kind": "tool-return"}],
  "kind": "request"},
 {"parts": [{"content": "Two notes; the page is gone.", "part_kind": "text"}],
  "model_name": "fn", "timestamp": "2026-11-01T09:00:03Z", "kind": "response"}
]"""


async def test_a_session_stored_before_typed_displays_resumes_showing_them(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    old = ModelMessagesTypeAdapter.validate_json(OLD_SESSION)
    store = SessionStore(db)
    store.save("old-session", old, title="old", cwd=str(tmp_path.resolve()))
    store.close()
    app = make_app(calling("list_memories", {}), tmp_path, db, resume="old-session")
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        await wait_until(
            pilot, lambda: len(app.chat.transcript.query(ToolCallBlock)) == 2, "the two calls"
        )
        await drawn(pilot, app)
        notes, fetch = app.chat.transcript.query(ToolCallBlock)
        assert notes.status == "ok" and '2 notes match "budget"' in rendered(notes)
        assert '"count"' not in rendered(notes)
        assert fetch.status == "failed" and "web_fetch failed: HTTP 404." in rendered(fetch)
        # The stored result is left as it was: the model reads the same on the next turn.
        part = tool_returns(app.session.history)[0]
        assert isinstance(part, ToolReturnPart) and part.metadata is None
