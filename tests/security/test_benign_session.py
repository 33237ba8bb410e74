"""Ordinary use does not nag: a scripted, benign 20-turn session in a trusted project with an
AGENTS.md, the user's own knowledge, notes and memories, and five web calls under the
default `web_policy` (allow). It counts the approval dialogs the session raises.

The count is the regression check of the origin model (security issue "a hostile repository
gets nothing"): project text and private text in the system prompt now count for the egress
guard, and that must not add a dialog to a session like this one. At e4bf4f9, before that
change, this same session raised BEFORE_CHANGE dialogs (measured by running this file there);
each was the egress guard asking because untrusted web results, or the note, were in context.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from co_tui.agent.build import build_agent
from co_tui.config.paths import user_config_dir
from co_tui.config.trust import load_project_settings
from co_tui.memory.config import memories_dir
from co_tui.memory.store import MemoryStore
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.session.chat import ChatSession
from tests.web.server import BRAVE_KEY, WebServer

BEFORE_CHANGE = 4  # dialogs at e4bf4f9

AGENTS_MD = """# Working on this project

- Run the tests with `make test`; format with `ruff format`.
- The package lives in `src/tidewatch/`; keep modules small.
- Answer in British English.
"""
KNOWLEDGE = """# About me

I am Dana Whitcombe. I work on tide prediction software at Harbourline Labs and live in
Brest. My manager is Oskar Lindqvist. I prefer short answers with examples.
"""
NOTE = "Projects/tides.md"
NOTE_TEXT = "# Tides\n\nCompare the harmonic constants for Brest against the 2019 survey.\n"
MEMORIES = ("Dana prefers pytest over unittest.", "The team standup is at 09:15 on weekdays.")


@pytest.fixture(scope="module")
def site() -> Iterator[WebServer]:
    server = WebServer().start()
    yield server
    server.stop()


def call(name: str, args: dict[str, Any], call_id: str) -> dict[int, DeltaToolCall]:
    return {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)}


def turns(site: WebServer) -> list[tuple[str, list[Any]]]:
    """(what the user types, what the model answers: its tool calls, then its text)."""
    docs = f"{site.url}/article"
    return [
        ("hi", []),
        ("what is this project and how do I run its tests?", []),
        (
            "how do I stream markdown in a textual app?",
            [call("web_search", {"query": "textual markdown stream widget"}, "w1")],
        ),
        ("read my tides note", [call("read_note", {"filename": NOTE}, "n1")]),
        (f"fetch {docs} and tell me what it says", [call("web_fetch", {"url": docs}, "w2")]),
        ("thanks, that helps", []),
        ("which notes do I have?", [call("list_notes", {}, "n2")]),
        (
            "what is the usual way to time out an asyncio call?",
            [call("web_search", {"query": "python asyncio wait_for timeout"}, "w3")],
        ),
        ("ok, show me an example", []),
        ("what do you remember about my preferences?", [call("list_memories", {}, "m1")]),
        (
            "fetch the plain page on the local docs site",
            [call("web_fetch", {"url": f"{site.url}/plain"}, "w4")],
        ),
        ("write a docstring for a tide table class", []),
        ("shorter please", []),
        ("now a test for it", []),
        ("search my notes for the survey", [call("search_notes", {"query": "survey"}, "n3")]),
        (
            "how does rich print markup safely?",
            [call("web_search", {"query": "rich console markup escape"}, "w5")],
        ),
        ("and in textual?", []),
        ("what time is standup?", []),
        ("remind me what the project's formatter is", []),
        ("summarise what we did", []),
    ]


class BenignModel:
    """Answers each turn with its scripted tool calls, one request each, then text."""

    def __init__(self, script: list[tuple[str, list[Any]]]) -> None:
        self.pending: list[Any] = []
        self.script = script
        self.turn = -1
        self.model = FunctionModel(stream_function=self._stream)

    def next_turn(self) -> None:
        self.turn += 1
        self.pending = list(self.script[self.turn][1])

    async def _stream(self, messages: list[Any], info: AgentInfo) -> Any:
        if self.pending:
            yield self.pending.pop(0)
            return
        yield f"Answer {self.turn + 1}."


def write_private_files(tmp_path: Path) -> Path:
    knowledge = user_config_dir() / "knowledge"
    knowledge.mkdir(parents=True)
    (knowledge / "me.md").write_text(KNOWLEDGE)
    store = MemoryStore(memories_dir())
    for text in MEMORIES:
        store.add(text, [], datetime.now(UTC))
    vault = tmp_path / "vault"
    (vault / "Projects").mkdir(parents=True)
    (vault / NOTE).write_text(NOTE_TEXT)
    return vault


async def test_a_benign_session_raises_no_more_dialogs_than_before(
    tmp_path: Path, site: WebServer
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text(AGENTS_MD)
    vault = write_private_files(tmp_path)
    overrides = {
        "sandbox_backend": "subprocess",
        "obsidian_vault_path": str(vault),
        "brave_search_api_key": BRAVE_KEY,
        "brave_search_base_url": f"{site.url}/res/v1",
        "web_fetch_private_hosts": ["127.0.0.1"],
    }
    loaded = load_project_settings(workspace, overrides=overrides, trust_project=True)
    if loaded.project is not None:  # the user trusts this project
        loaded.project.remember()
    script = turns(site)
    model = BenignModel(script)
    frontend = RecordingFrontend(lambda request: ApprovalDecision.APPROVE)
    session = ChatSession(
        loaded.settings,
        workspace=workspace,
        frontend=frontend,
        record=False,
        bundle=build_agent(loaded.settings, model=model.model),
    )
    await session.start()
    try:
        for prompt, _ in script:
            model.next_turn()
            result = await session.run(prompt)
            assert result.ok, result.error
    finally:
        await session.aclose()

    web_calls = [c for _, calls in script for c in calls if c[0].name.startswith("web_")]
    assert len(script) == 20 and len(web_calls) == 5
    assert len(site.hits) == 5  # every web call ran (approved where it asked)
    asked = [request.tool_name for request in frontend.approval_requests]
    assert all(name.startswith("web_") for name in asked), asked
    print(f"benign session: {len(asked)} dialogs ({asked})")
    assert len(asked) <= BEFORE_CHANGE
