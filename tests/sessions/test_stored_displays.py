"""A tool's `ToolDisplay` survives the session store: stored as JSON, typed again on load;
metadata that is not a display (an MCP app's) is kept as it was."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from co_tui.protocol.tool_display import ToolDisplay
from co_tui.store.session_store import SessionStore
from tests.helpers import tool_returns

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def with_metadata(metadata: Any) -> list[ModelRequest | ModelResponse]:
    return [
        ModelResponse(
            parts=[ToolCallPart(tool_name="t", args={}, tool_call_id="c1")], timestamp=T0
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(
                    tool_name="t",
                    content={"display": "shown", "n": 1},
                    tool_call_id="c1",
                    metadata=metadata,
                    timestamp=T0,
                )
            ]
        ),
    ]


def saved_and_loaded(db: Path, messages: list[ModelRequest | ModelResponse]) -> list[Any]:
    """`messages` through the store, read back by another store (as a fresh process would)."""
    writer = SessionStore(db)
    writer.save("s1", messages)
    writer.close()
    reader = SessionStore(db)
    try:
        return list(reader.load("s1").messages)
    finally:
        reader.close()


@pytest.mark.parametrize("display", [ToolDisplay("shown"), ToolDisplay("shown", error=True)])
def test_a_display_comes_back_typed(tmp_path: Path, display: ToolDisplay) -> None:
    messages = with_metadata(display)
    loaded = saved_and_loaded(tmp_path / "s.db", messages)
    assert loaded == messages
    (part,) = tool_returns(loaded)
    assert isinstance(part.metadata, ToolDisplay) and part.metadata == display


@pytest.mark.parametrize(
    "metadata",
    [
        {"ui": {"resourceUri": "ui://app"}},  # an MCP app's
        {"text": "shown", "error": False, "more": 1},  # a display's keys and more
        {"text": "shown", "error": "yes"},
        {"text": "shown"},
    ],
)
def test_other_metadata_is_left_as_stored(tmp_path: Path, metadata: dict[str, Any]) -> None:
    (part,) = tool_returns(saved_and_loaded(tmp_path / "s.db", with_metadata(metadata)))
    assert part.metadata == metadata
