"""web_search against a local Brave-compatible server."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelRequest

from co_tui.config.settings import Settings
from tests.web.conftest import tool_turn
from tests.web.server import BRAVE_KEY, WebServer


def brave(site: WebServer, key: str | None = BRAVE_KEY) -> Settings:
    return Settings(brave_search_api_key=key, brave_search_base_url=f"{site.url}/res/v1")


async def test_results_show_titles_and_urls(tmp_path: Path, site: WebServer) -> None:
    turn = await tool_turn(tmp_path, brave(site), "web_search", {"query": "tides", "count": 3})
    out = turn.returned
    assert out["count"] == 3
    assert out["display"].splitlines() == [
        'Web results for "tides":',
        "1. **Result 1 about tides**",
        "   https://example.org/1",
        "   Snippet 1 & more",
        "2. **Result 2 about tides**",
        "   https://example.org/2",
        "   Snippet 2 & more",
        "3. **Result 3 about tides**",
        "   https://example.org/3",
        "   Snippet 3 & more",
    ]
    [received] = site.headers_seen
    assert received["x-subscription-token"] == BRAVE_KEY
    [shown] = [r for r in turn.frontend.of("tool_result") if r.tool_name == "web_search"]
    assert shown.display == out["display"]


async def test_bad_count_asks_the_model_to_fix_it(tmp_path: Path, site: WebServer) -> None:
    turn = await tool_turn(tmp_path, brave(site), "web_search", {"query": "x", "count": 50})
    assert site.hits == []
    assert turn.result.ok  # a retry prompt went back to the model, the turn went on


async def test_401_says_to_check_the_key(tmp_path: Path, site: WebServer) -> None:
    turn = await tool_turn(tmp_path, brave(site, "wrong"), "web_search", {"query": "tides"})
    out = turn.returned
    assert out["error"] is True and out["status"] == 401
    assert "rejected the API key (HTTP 401)" in out["display"]
    assert "BRAVE_SEARCH_API_KEY" in out["display"]


async def test_429_reports_retry_after(tmp_path: Path, site: WebServer) -> None:
    site.route("/res/v1/web/search", lambda q, h: (429, {"Retry-After": "30"}, b'{"type":"Error"}'))
    turn = await tool_turn(tmp_path, brave(site), "web_search", {"query": "tides"})
    out = turn.returned
    assert out["retry_after"] == 30 and out["retryable"] is True
    assert "rate limit reached (HTTP 429); retry after 30 seconds" in out["display"]


async def test_missing_key_explains_the_setup(tmp_path: Path, site: WebServer) -> None:
    """With no key the tool is not offered (agent/offered_tools.py): a call to it runs
    nothing, and the instructions say how to set it up, so the model can tell the user."""
    turn = await tool_turn(tmp_path, brave(site, None), "web_search", {"query": "tides"})
    assert site.hits == []
    assert "Unknown tool name: 'web_search'" in str(turn.seen_by_model)
    first_request = turn.model.seen[0][-1]
    assert isinstance(first_request, ModelRequest)
    assert "BRAVE_SEARCH_API_KEY" in (first_request.instructions or "")
