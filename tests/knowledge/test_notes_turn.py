"""End to end through run_turn: a scripted model searches, reads, is refused, saves memory."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest

from co_tui.config.paths import PROJECT_DIR_NAME
from co_tui.config.settings import Settings
from co_tui.config.trust.project_files import ProjectView, read_project_files
from co_tui.protocol.frontend import ApprovalDecision
from co_tui.protocol.recording import RecordingFrontend
from co_tui.turn.runner import run_turn
from tests.helpers import Call, ScriptedModel, make_bundle, make_deps, tool_returns
from tests.knowledge.conftest import SECRET


def _settings(vault: Path) -> Settings:
    return Settings(obsidian_vault_path=str(vault))


async def test_search_then_read_reaches_the_frontend(tmp_path: Path, vault: Path) -> None:
    model = ScriptedModel(
        [Call("search_notes", {"query": "budget meeting"}, "s1")],
        [Call("read_note", {"filename": "projects/alpha.md"}, "r1")],
        ["The meeting is on Monday."],
    )
    deps = make_deps(tmp_path, _settings(vault))
    frontend = RecordingFrontend()
    result = await run_turn(
        make_bundle(model.model).agent, "when is the alpha budget meeting?",
        deps=deps, history=[], frontend=frontend,
    )  # fmt: skip
    assert result.ok and result.output == "The meeting is on Monday."
    search, read = frontend.of("tool_result")
    assert (search.tool_name, search.status) == ("search_notes", "ok")
    assert search.display and "projects/alpha.md" in search.display
    assert (read.tool_name, read.status) == ("read_note", "ok")
    assert "The Alpha project budget meeting is on Monday." in read.content
    assert frontend.approval_requests == []  # read-only: no approval asked


async def test_reading_outside_the_vault_is_refused(tmp_path: Path, vault: Path) -> None:
    model = ScriptedModel(
        [Call("read_note", {"filename": "../secret.txt"}, "r1")],
        ["I cannot read that file."],
    )
    frontend = RecordingFrontend()
    result = await run_turn(
        make_bundle(model.model).agent, "read ../secret.txt",
        deps=make_deps(tmp_path, _settings(vault)), history=[], frontend=frontend,
    )  # fmt: skip
    assert result.ok
    (refused,) = frontend.of("tool_result")
    assert refused.status == "failed" and "must stay inside the vault" in refused.content
    (part,) = tool_returns(result.messages)
    assert part.outcome == "retried"  # a ModelRetry: the model is told to correct itself
    assert all(SECRET not in str(p.content) for p in tool_returns(result.messages))
    assert SECRET not in repr(frontend.log)


async def test_save_memory_waits_for_approval_and_instructions_load_knowledge(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    (ws / PROJECT_DIR_NAME / "knowledge").mkdir(parents=True)
    (ws / PROJECT_DIR_NAME / "knowledge" / "team.md").write_text("TEAM-FACT: standup at 9")
    model = ScriptedModel(
        [Call("save_memory", {"content": "User likes rooibos tea."}, "m1")],
        ["Saved."],
        [Call("recall_memory", {"query": "rooibos"}, "m2")],
        ["You like rooibos."],
    )
    # The project is trusted: its knowledge comes in as instructions (see test_prompts).
    deps = make_deps(ws, project=ProjectView(read_project_files(ws), trusted=True))
    agent = make_bundle(model.model).agent
    denied = RecordingFrontend([ApprovalDecision.DENY])
    await run_turn(agent, "remember rooibos", deps=deps, history=[], frontend=denied)
    assert [r.tool_name for r in denied.approval_requests] == ["save_memory"]
    assert not (Path(deps.memory.path)).exists() or not list(deps.memory.path.iterdir())

    model.responses = [
        [Call("save_memory", {"content": "User likes rooibos tea."}, "m1")],
        ["Saved."],
        [Call("recall_memory", {"query": "rooibos"}, "m2")],
        ["You like rooibos."],
    ]
    approve = RecordingFrontend([ApprovalDecision.APPROVE])
    first = await run_turn(agent, "remember", deps=deps, history=[], frontend=approve)
    assert "Saved memory #1" in (approve.of("tool_result")[0].display or "")
    fresh = make_deps(ws)  # a second session
    second = RecordingFrontend()
    await run_turn(agent, "what tea?", deps=fresh, history=[], frontend=second)
    assert "rooibos" in second.of("tool_result")[0].content
    assert first.ok
    # The dynamic instructions carried the project knowledge file.
    request = model.seen[0][-1]
    assert isinstance(request, ModelRequest) and "TEAM-FACT" in (request.instructions or "")
