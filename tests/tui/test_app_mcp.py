"""The app connects configured MCP servers: tools usable in a turn, a broken server reported."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from co_tui.config.settings import Settings
from tests.helpers import Call, ScriptedModel
from tests.tui.helpers import SIZE, make_app, settle

SERVER_APP = Path(__file__).parent.parent / "mcp" / "server_app.py"


@pytest.mark.slow
async def test_mcp_tools_work_in_the_app_and_a_broken_server_is_shown(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    settings = Settings(
        theme="textual-dark",
        mcp_servers={  # type: ignore[arg-type]
            "demo": {
                "command": sys.executable,
                "args": [str(SERVER_APP), str(log)],
                "approval": "never",
            },
            "broken": {"command": "/nonexistent/co-tui-mcp", "approval": "never"},
        },
    )
    model = ScriptedModel([Call("demo_echo", {"text": "hi from the app"}, "m1")], ["echoed"])

    async def stream(messages: list[Any], info: Any) -> Any:
        async for chunk in model._stream(messages, info):
            yield chunk

    app = make_app(stream, tmp_path, settings=settings)
    async with app.run_test(size=SIZE) as pilot:
        assert await app.wait_ready()
        status = app.chat.status_bar.status.mcp
        assert status == "MCP 1/2 (failed: broken)"
        notes = " ".join(str(getattr(w, "_source", "")) for w in app.chat.transcript.items)
        assert "broken" in notes
        app.chat.prompt.text = "echo something"
        await pilot.press("enter")
        await settle(pilot, app)
        assert [json.loads(line)["tool"] for line in log.read_text().splitlines()] == ["echo"]
        assert app.session.last_answer == "echoed"
