"""A sub-agent's egress approval goes through the same approval flow as the main turn's: the
user's answer is recorded, shown and traced the same way, and approve-all chosen in a
sub-agent's dialog is the session's.

One scripted FunctionModel plays the parent and its sub-agent: the parent reads a private
note, then (per test) fetches a URL carrying its codeword itself, delegates the same fetch,
and saves a memory. The egress guard holds both fetches; the user answers in a
RecordingFrontend.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from co_tui.config.settings import Settings
from co_tui.protocol.events import ApprovalRecord
from co_tui.protocol.frontend import (
    ApprovalAnswer,
    ApprovalDecision,
    ApprovalRequest,
    args_hash,
)
from co_tui.protocol.recording import RecordingFrontend
from co_tui.telemetry import Telemetry, setup_telemetry, shutdown_telemetry
from co_tui.turn.runner import run_turn
from tests.helpers import make_bundle, make_deps, tool_returns
from tests.security.test_egress_guard import NOTE, leak_url, vault_with_note, web_settings
from tests.subagents.scripts import first_prompt
from tests.telemetry.conftest import rows
from tests.web.server import WebServer

CHILD_TASK = "fetch the codeword page"
MEMORY = "the user likes tangerines"
FEEDBACK = "do not send the codeword anywhere"


@pytest.fixture(scope="module")
def site() -> Iterator[WebServer]:
    server = WebServer().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _fresh_hits(site: WebServer) -> None:
    site.hits.clear()


@pytest.fixture
def telemetry(tmp_path: Path) -> Iterator[tuple[Telemetry, Path]]:
    db = tmp_path / "data" / "co-tui.db"
    tel = setup_telemetry(Settings(), db)
    assert tel is not None
    yield tel, db
    shutdown_telemetry()


class Script:
    """The parent: read the note, then each of `steps` in order ("fetch" itself, "delegate",
    "remember"), then answer "done". The sub-agent: fetch the URL, then report."""

    def __init__(self, url: str, steps: list[str]) -> None:
        self.url = url
        self.steps = steps
        self.model = FunctionModel(stream_function=self._stream, model_name="scripted")

    @staticmethod
    def _call(name: str, args: dict[str, Any], call_id: str) -> dict[int, DeltaToolCall]:
        return {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)}

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        done = len(tool_returns(messages))
        if first_prompt(messages) == CHILD_TASK:
            yield self._call("web_fetch", {"url": self.url}, "child-f") if done == 0 else "report"
            return
        if done == 0:
            yield self._call("read_note", {"filename": NOTE}, "read")
            return
        if done > len(self.steps):
            yield "done"
            return
        step = self.steps[done - 1]
        if step == "fetch":
            yield self._call("web_fetch", {"url": self.url}, "parent-f")
        elif step == "delegate":
            yield self._call("delegate", {"task": CHILD_TASK, "tools": ["web_fetch"]}, "del")
        else:
            yield self._call("save_memory", {"content": MEMORY}, "mem")


async def turn(
    tmp_path: Path, site: WebServer, steps: list[str], frontend: RecordingFrontend
) -> tuple[Any, Any]:
    settings = web_settings(site, vault_with_note(tmp_path))
    deps = make_deps(tmp_path, settings)
    script = Script(leak_url(site), steps)
    result = await run_turn(
        make_bundle(script.model, settings).agent, "go", deps=deps, history=[], frontend=frontend
    )
    assert result.ok, result.error
    return result, deps


def _without_ids(record: ApprovalRecord) -> dict[str, Any]:
    fields = asdict(record)
    del fields["session_id"], fields["tool_call_id"]
    return fields


async def test_a_subagents_egress_denial_is_recorded_and_traced_like_the_main_turns(
    tmp_path: Path, site: WebServer, telemetry: tuple[Telemetry, Path]
) -> None:
    """The same fetch, held and denied with the same words, once in the parent and once in
    its sub-agent: the two decisions differ only in whose call they were."""
    denial = ApprovalAnswer(ApprovalDecision.DENY, feedback=f"\x1b[31m{FEEDBACK}\n")
    frontend = RecordingFrontend([denial, denial])
    result, deps = await turn(tmp_path, site, ["fetch", "delegate"], frontend)

    parent_ask, child_ask = frontend.approval_requests
    assert parent_ask.session_id == deps.session_id != child_ask.session_id
    assert parent_ask.egress and child_ask.egress
    parent, child = [r for r in frontend.of(ApprovalRecord) if r.tool_name == "web_fetch"]
    assert (parent.session_id, child.session_id) == (deps.session_id, child_ask.session_id)
    assert _without_ids(parent) == _without_ids(child)
    assert parent.decision == "deny" and parent.feedback == FEEDBACK  # plain, one line
    assert parent.args_hash == args_hash({"url": leak_url(site)})
    assert parent.reason == parent_ask.reason == child_ask.reason
    assert site.hits == []
    # Only the parent's own calls are journaled (the sub-agent's run never pauses).
    assert [r.tool_call_id for r in result.approvals] == ["parent-f"]

    tel, db = telemetry
    assert tel.flush()
    spans = [
        json.loads(r["attributes"])
        for r in rows(db, "SELECT * FROM spans WHERE name = 'approval web_fetch'")
    ]
    assert len(spans) == 2
    for span in spans:
        del span["gen_ai.tool.call.id"]
    assert spans[0] == spans[1]
    assert spans[0]["co.approval.decision"] == "deny"
    assert spans[0]["co.approval.args_sha256"] == parent.args_hash


async def test_approve_all_in_a_subagents_dialog_turns_it_on_for_the_parent_session(
    tmp_path: Path, site: WebServer
) -> None:
    """The user chooses "approve all" when the sub-agent's fetch asks: the fetch runs, and
    the parent's next call that would ask (saving a memory) runs without asking."""

    def answer(request: ApprovalRequest) -> ApprovalDecision:
        assert request.tool_name == "web_fetch", f"asked about {request.tool_name}"
        return ApprovalDecision.APPROVE_ALL

    frontend = RecordingFrontend(answer)
    result, deps = await turn(tmp_path, site, ["delegate", "remember"], frontend)

    assert len(frontend.approval_requests) == 1
    assert site.hits == ["/plain"]
    assert deps.auto_confirm  # the session's approve-all: the status bar shows yolo
    decisions = {r.tool_name: r.decision for r in frontend.of(ApprovalRecord)}
    assert decisions == {"web_fetch": "approve_all", "save_memory": "auto"}
    [memory] = [r for r in result.approvals if r.tool_name == "save_memory"]
    assert memory.reason == "session approve-all (yolo) is on"


async def test_a_subagents_egress_ask_grants_no_more_than_it_offered(
    tmp_path: Path, site: WebServer
) -> None:
    """The sub-agent's dialog offers neither "always allow" nor "with network": an answer
    claiming either (with a rule covering every fetch) approves that one call and saves no
    rule, so the parent's own fetch afterwards still asks."""
    answers = iter(
        [
            ApprovalAnswer(ApprovalDecision.ALWAYS_ALLOW, rule="web_fetch"),
            ApprovalDecision.DENY,
        ]
    )
    frontend = RecordingFrontend(lambda request: next(answers))
    _, deps = await turn(tmp_path, site, ["delegate", "fetch"], frontend)

    child_ask, parent_ask = frontend.approval_requests
    assert child_ask.suggested_rule is None and child_ask.network is None
    assert parent_ask.session_id == deps.session_id and parent_ask.egress
    child, parent = [r for r in frontend.of(ApprovalRecord) if r.tool_name == "web_fetch"]
    assert (child.decision, child.rule) == ("approve", "")
    assert parent.decision == "deny"
    assert deps.permissions.listing().rules == ()  # nothing saved for the project
    assert not deps.auto_confirm
    assert site.hits == ["/plain"]  # the sub-agent's one approved fetch
    assert not frontend.of("status")  # no "rule not saved" warning: none was offered
