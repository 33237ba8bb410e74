"""Local web servers, and a helper that runs one scripted tool call through a real turn."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from co_tui.config.settings import Settings
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import TurnResult, run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, tool_returns
from tests.web.server import WebServer


@pytest.fixture
def site() -> Iterator[WebServer]:
    server = WebServer().start()
    yield server
    server.stop()


@pytest.fixture
def other_site() -> Iterator[WebServer]:
    server = WebServer().start()
    yield server
    server.stop()


@dataclass
class ToolTurn:
    result: TurnResult
    frontend: RecordingFrontend
    tool_names: list[str]
    model: ScriptedModel

    @property
    def seen_by_model(self) -> Any:
        """The tool result as the model read it in its next request (fenced when untrusted)."""
        parts = tool_returns(self.model.seen[-1])
        return parts[-1].content if parts else None

    @property
    def returned(self) -> Any:
        """What the tool returned to the model (dict for our tools, str for pydantic-ai's own
        messages such as an unknown tool)."""
        parts = tool_returns(self.result.messages)
        if parts:
            return parts[-1].content
        return None


async def tool_turn(
    workspace: Path,
    settings: Settings,
    tool: str,
    args: dict[str, Any],
    decisions: list[ApprovalDecision] | None = None,
    deps_settings: Settings | None = None,
) -> ToolTurn:
    model = ScriptedModel([Call(tool, args, "c1")], ["done"])
    bundle = make_bundle(model.model, settings)
    deps = make_deps(workspace, deps_settings or settings)
    frontend = RecordingFrontend(decisions or [])
    result = await run_turn(bundle.agent, "go", deps=deps, history=[], frontend=frontend)
    return ToolTurn(result, frontend, bundle.tool_names, model)
