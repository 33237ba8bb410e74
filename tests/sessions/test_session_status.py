"""The session's status as one value (session/status.py): what `session_status` derives from
a session, and how a turn's usage events move the token counts between two derivations."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage

from co_tui.agent.build import build_agent
from co_tui.config.settings import Settings
from co_tui.session.chat import ChatSession
from co_tui.session.status import SessionStatus, session_status
from co_tui.store.session_store import SessionStore
from tests.helpers import make_deps
from tests.tui.helpers import text_stream


def open_session(
    tmp_path: Path, settings: Settings, *, isolation: str | None = None
) -> ChatSession:
    model = FunctionModel(stream_function=text_stream("an answer"), model_name="fn")
    session = ChatSession(
        settings,
        store=SessionStore(tmp_path / "sessions.db"),
        bundle=build_agent(settings, model=model, instructions="t"),
        deps=make_deps(tmp_path, settings, isolation),
    )
    session.build()
    return session


def test_the_first_frame_shows_the_label_and_a_sandbox_still_loading() -> None:
    status = session_status("loading model…", None, None)
    assert status == SessionStatus(model="loading model…", sandbox="…", isolation="…")


async def test_a_turn_and_approve_all_change_what_is_derived(tmp_path: Path) -> None:
    session = open_session(tmp_path, Settings())
    before = session_status("fn", session, None)
    assert (before.sandbox, before.isolation, before.network) == ("subprocess", "none", "")
    assert (before.turn_tokens, before.session_tokens, before.approve_all) == (0, 0, False)
    assert before.warning == "" and before.mcp == "" and before.cost == ""

    await session.run("a question")
    assert session.deps is not None
    session.deps.set_approve_all(True)
    after = session_status("fn", session, None, note="kept")
    assert after.session_tokens == session.session_tokens > 0
    assert after.turn_tokens == after.session_tokens  # the first turn is all there was
    assert after.approve_all and after.note == "kept"
    await session.aclose()


def test_only_an_isolating_sandbox_shows_its_network(tmp_path: Path) -> None:
    """Without isolation every command reaches the host's network: "(none)" says so already."""
    session = open_session(tmp_path, Settings(), isolation="full")
    status = session_status("fn", session, None)
    assert (status.isolation, status.network) == ("full", "host")


def test_a_stored_priced_session_shows_its_cost_and_how_full_the_context_is(
    tmp_path: Path,
) -> None:
    answer = ModelResponse(
        parts=[TextPart("an answer")],
        model_name="gpt-4o",
        provider_name="openai",
        provider_url="https://api.openai.com/v1/",
        usage=RequestUsage(input_tokens=10_000, output_tokens=2_000),
    )
    history = [ModelRequest.user_text_prompt("a question"), answer]
    SessionStore(tmp_path / "sessions.db").save("priced", history, title="priced")
    session = open_session(tmp_path, Settings(context_window=100_000))
    session.open_stored(resume="priced")
    status = session_status("fn", session, None)
    assert status.cost == "$0.0450"  # 10k in at $2.50/M + 2k out at $10/M
    assert (status.session_tokens, status.context_tokens) == (12_000, 12_000)
    assert status.context_percent == 12


def test_a_context_window_that_is_unknown_has_no_percentage() -> None:
    assert SessionStatus(context_tokens=5_000).context_percent is None


def test_usage_events_add_the_turn_to_what_the_session_had_used() -> None:
    status = SessionStatus(turn_tokens=40, session_tokens=100).turn_started()
    assert (status.turn_tokens, status.session_tokens) == (0, 100)
    status = status.turn_used(30)
    assert (status.turn_tokens, status.session_tokens) == (30, 130)
    status = status.turn_used(55)  # each Usage gives the turn's running total
    assert (status.turn_tokens, status.session_tokens) == (55, 155)
