"""The token guard in front of textual-serve, over plain HTTP (no browser needed)."""

from __future__ import annotations

from collections.abc import Iterator
from http.client import HTTPConnection
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from co_tui.serve.gate import COOKIE_NAME, is_loopback, parse_host
from tests.serve.process import ServeProcess, free_port


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    proc = ServeProcess(tmp_path, free_port())
    try:
        yield proc
    finally:
        proc.stop()


def get(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    parts = urlsplit(url)
    conn = HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def test_one_time_token_prefix_and_cookie(server: ServeProcess) -> None:
    url = server.url()
    token = url.split("token=", 1)[1]
    assert get(url, "/")[0] == 403
    assert get(url, "/ws")[0] == 403
    assert get(url, "/static/js/textual.js")[0] == 403
    assert get(url, "/?token=wrong")[0] == 403

    status, headers = get(url, f"/?token={token}")
    assert status == 303  # the token leaves the address bar for the app's secret prefix
    app_path = headers["location"]
    assert app_path.startswith("/") and app_path.endswith("/") and len(app_path) > 20
    assert headers["referrer-policy"] == "no-referrer"
    name, _, rest = headers["set-cookie"].partition("=")
    session = rest.split(";", 1)[0]
    assert name == COOKIE_NAME and session and session != token  # the cookie is not the token
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and f"Path={app_path}" in cookie

    with_cookie = {"Cookie": f"{COOKIE_NAME}={session}"}
    assert get(url, app_path, with_cookie)[0] == 200
    assert get(url, f"{app_path}static/js/textual.js", with_cookie)[0] == 200
    assert get(url, app_path)[0] == 403  # the prefix alone is not enough
    assert get(url, "/", with_cookie)[0] == 403  # nor the cookie alone
    assert get(url, app_path, {**with_cookie, "Origin": "http://evil.example"})[0] == 403
    # DNS rebinding: a loopback server answers only to loopback names.
    port = urlsplit(url).port
    assert get(url, app_path, {**with_cookie, "Host": f"evil.example:{port}"})[0] == 403
    assert get(url, f"/?token={token}")[0] == 403  # once
    assert "".join(server.lines).count(token) == 1  # printed once, never logged


def test_loopback_names() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert not is_loopback("example.com")


def test_host_headers() -> None:
    assert parse_host("127.0.0.1:8000", 80) == ("127.0.0.1", 8000)
    assert parse_host("LOCALHOST", 80) == ("localhost", 80)
    assert parse_host("[::1]:9000", 80) == ("::1", 9000)
    for bad in ("user@127.0.0.1:8000", "127.0.0.1:8000/x", "127.0.0.1 :8000", "", "a:b:c"):
        assert parse_host(bad, 80) is None, bad


def test_missing_browser_skips_locally_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.serve import browser

    monkeypatch.setattr(browser, "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.delenv("CO_TUI_CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium"):
        browser.require_browser()
    monkeypatch.setenv("CO_TUI_CI", "1")
    with pytest.raises(pytest.fail.Exception, match="chromium"):
        browser.require_browser()
