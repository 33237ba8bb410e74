"""web_policy.search / web_policy.fetch: allow runs, ask waits for approval, deny refuses."""

from __future__ import annotations

from pathlib import Path

from co_tui.config.settings import Settings
from co_tui.protocol.frontend import ApprovalDecision
from tests.web.conftest import tool_turn
from tests.web.server import BRAVE_KEY, WebServer


def settings_for(site: WebServer, search: str, fetch: str) -> Settings:
    return Settings(
        web_policy={"search": search, "fetch": fetch},  # type: ignore[arg-type]
        web_fetch_private_hosts=["127.0.0.1"],
        brave_search_api_key=BRAVE_KEY,
        brave_search_base_url=f"{site.url}/res/v1",
    )


async def test_allow_runs_without_asking(tmp_path: Path, site: WebServer) -> None:
    settings = settings_for(site, "allow", "allow")
    turn = await tool_turn(tmp_path, settings, "web_fetch", {"url": f"{site.url}/plain"})
    assert turn.frontend.approval_requests == []
    assert site.hits == ["/plain"]
    assert turn.result.ok


async def test_ask_fetch_denied_never_reaches_the_server(tmp_path: Path, site: WebServer) -> None:
    settings = settings_for(site, "allow", "ask")
    url = f"{site.url}/plain"
    turn = await tool_turn(tmp_path, settings, "web_fetch", {"url": url}, [ApprovalDecision.DENY])
    [request] = turn.frontend.approval_requests
    assert request.tool_name == "web_fetch" and request.args == {"url": url}
    assert site.hits == []
    assert turn.result.output == "done"


async def test_ask_fetch_approved_runs(tmp_path: Path, site: WebServer) -> None:
    settings = settings_for(site, "allow", "ask")
    turn = await tool_turn(
        tmp_path, settings, "web_fetch", {"url": f"{site.url}/plain"}, [ApprovalDecision.APPROVE]
    )
    assert len(turn.frontend.approval_requests) == 1
    assert "just text" in turn.returned["content"]


async def test_ask_search_needs_approval(tmp_path: Path, site: WebServer) -> None:
    settings = settings_for(site, "ask", "allow")
    denied = await tool_turn(tmp_path, settings, "web_search", {"query": "tides"})
    assert [r.tool_name for r in denied.frontend.approval_requests] == ["web_search"]
    assert site.hits == []
    approved = await tool_turn(
        tmp_path, settings, "web_search", {"query": "tides"}, [ApprovalDecision.APPROVE]
    )
    assert approved.returned["count"] == 5
    assert site.hits == ["/res/v1/web/search"]


async def test_deny_does_not_register_the_tool(tmp_path: Path, site: WebServer) -> None:
    settings = settings_for(site, "deny", "deny")
    turn = await tool_turn(tmp_path, settings, "web_fetch", {"url": f"{site.url}/plain"})
    assert "web_fetch" not in turn.tool_names and "web_search" not in turn.tool_names
    assert "Unknown tool name: 'web_fetch'" in turn.returned  # the model was told; nothing ran
    assert site.hits == []
    assert turn.result.ok


async def test_deny_in_the_session_refuses_even_if_registered(
    tmp_path: Path, site: WebServer
) -> None:
    # An agent built before the policy changed: the session's deps still say deny.
    turn = await tool_turn(
        tmp_path,
        settings_for(site, "allow", "allow"),
        "web_fetch",
        {"url": f"{site.url}/plain"},
        deps_settings=settings_for(site, "deny", "deny"),
    )
    assert turn.returned["display"].startswith("Fetching web pages is turned off")
    assert site.hits == []
