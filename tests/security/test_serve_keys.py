"""`co-tui serve` keys: nothing the browser holds opens the app from another port or origin.

Browsers send cookies for 127.0.0.1 to every port of 127.0.0.1. The session cookie is
scoped to the app's secret path prefix, is not the printed token, and is refused with a Host,
Origin or Sec-Fetch-Site that names another port; the printed token works once."""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Iterator
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from co_tui.serve.gate import COOKIE_NAME
from tests.serve.browser import Browser, require_browser
from tests.serve.process import ServeProcess, free_port

FROM_THE_TERMINAL = {"Sec-Fetch-Site": "none"}  # what a browser sends for a typed address


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    proc = ServeProcess(tmp_path, free_port())
    try:
        yield proc
    finally:
        proc.stop()


def get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    conn = HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def websocket(port: int, path: str, headers: dict[str, str]) -> int:
    key = base64.b64encode(os.urandom(16)).decode()
    upgrade = {
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Key": key,
        "Sec-WebSocket-Version": "13",
    }
    conn = HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={**upgrade, **headers})
        return conn.getresponse().status
    finally:
        conn.close()


def sign_in(server: ServeProcess) -> tuple[int, str, str, str]:
    """As the browser does: the printed address, once. (port, token, app path, session)."""
    url = server.url()
    port = urlsplit(url).port
    assert port is not None
    token = url.split("token=", 1)[1]
    status, headers = get(port, f"/?token={token}", FROM_THE_TERMINAL)
    assert status == 303, status
    session = headers["set-cookie"].split(";", 1)[0].partition("=")[2]
    return port, token, headers["location"], session


def test_the_cookie_is_refused_from_another_port_or_without_the_prefix(
    server: ServeProcess,
) -> None:
    port, token, app_path, session = sign_in(server)
    other = free_port()
    cookie = {"Cookie": f"{COOKIE_NAME}={session}"}
    assert session != token and token not in app_path and session not in app_path
    assert get(port, app_path, cookie)[0] == 200  # the browser's own request
    assert get(port, app_path, {**cookie, "Sec-Fetch-Site": "same-origin"})[0] == 200

    # Replayed by (or through a page of) another loopback port: refused.
    assert get(port, app_path, {**cookie, "Host": f"127.0.0.1:{other}"})[0] == 403
    assert get(port, app_path, {**cookie, "Origin": f"http://127.0.0.1:{other}"})[0] == 403
    assert get(port, app_path, {**cookie, "Sec-Fetch-Site": "same-site"})[0] == 403
    assert get(port, app_path, {**cookie, "Sec-Fetch-Site": "cross-site"})[0] == 403
    # The cookie without the secret prefix opens nothing, the prefix without it neither.
    for path in ("/", "/ws", "/static/js/textual.js", f"{app_path[:-2]}/"):
        assert get(port, path, cookie)[0] == 403, path
    assert get(port, app_path)[0] == 403
    assert get(port, app_path, {"Cookie": f"{COOKIE_NAME}={token}"})[0] == 403

    # The WebSocket: only from the app's own origin.
    ws = f"{app_path}ws"
    own = f"http://127.0.0.1:{port}"
    assert websocket(port, ws, {**cookie, "Origin": f"http://127.0.0.1:{other}"}) == 403
    assert websocket(port, ws, cookie) == 403  # no Origin: not a browser page of ours
    assert websocket(port, "/ws", {**cookie, "Origin": own}) == 403
    assert websocket(port, ws, {**cookie, "Origin": own}) == 101


def test_host_with_user_info_is_refused(server: ServeProcess) -> None:
    port, _, app_path, session = sign_in(server)
    cookie = {"Cookie": f"{COOKIE_NAME}={session}"}
    for host in (f"user@127.0.0.1:{port}", f"user:pw@localhost:{port}", f"127.0.0.1:{port}@x"):
        status, _ = get(port, app_path, {**cookie, "Host": host})
        assert status == 403, host
    assert get(port, app_path, {**cookie, "Host": f"localhost:{port}"})[0] == 200


def test_the_printed_token_works_once(server: ServeProcess) -> None:
    url = server.url()
    port = urlsplit(url).port
    assert port is not None
    token = url.split("token=", 1)[1]
    # A page on another port that learnt the address cannot spend it...
    other_page = {"Sec-Fetch-Site": "same-site", "Referer": f"http://127.0.0.1:{free_port()}/"}
    assert get(port, f"/?token={token}", other_page)[0] == 403
    # ...so it is still the user's; it opens one session, then never again.
    status, headers = get(port, f"/?token={token}", FROM_THE_TERMINAL)
    assert status == 303 and COOKIE_NAME in headers["set-cookie"]
    assert get(port, f"/?token={token}", FROM_THE_TERMINAL)[0] == 403
    assert get(port, f"{headers['location']}?token={token}")[0] == 403


class Recorder(ThreadingHTTPServer):
    """Another web server on 127.0.0.1: records the Cookie header of every request."""

    def __init__(self, page: str) -> None:
        self.cookies: list[tuple[str, str]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                recorder.cookies.append((self.path, self.headers.get("Cookie", "")))
                body = page.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


@pytest.mark.browser
def test_in_chromium_another_port_never_gets_the_cookie_nor_the_app(
    server: ServeProcess,
) -> None:
    require_browser()
    url = server.url()
    port = urlsplit(url).port
    browser = Browser()
    recorder: Recorder | None = None
    try:
        browser.open(url)
        browser.wait_for(lambda t: "Ask anything" in t, "the prompt")
        app_path = urlsplit(browser.driver.current_url).path
        assert len(app_path) > 20 and "token" not in browser.driver.current_url
        # The worst case: a page on another port that even knows the secret prefix.
        page = f"""<script>
          const ws = new WebSocket("ws://127.0.0.1:{port}{app_path}ws");
          ws.onopen = () => {{ document.title = "opened"; }};
          ws.onclose = () => {{ if (document.title !== "opened") document.title = "refused"; }};
        </script>"""
        recorder = Recorder(page)
        browser.open(f"http://127.0.0.1:{recorder.port}/")
        browser.driver.set_script_timeout(20)
        title = browser.driver.execute_async_script(
            "const done = arguments[0];"
            "const t = setInterval(() => { if (document.title) { clearInterval(t);"
            " done(document.title); } }, 50);"
        )
        assert title == "refused"
        assert recorder.cookies and all(COOKIE_NAME not in c for _, c in recorder.cookies)
        # Control: ports do not separate cookies, the path does. Were the prefix known there,
        # the cookie would go along, which is why the prefix is secret and never sent away.
        browser.open(f"http://127.0.0.1:{recorder.port}{app_path}")
        # (the browser may also ask for /favicon.ico, outside the path: look at the page's)
        sent = [cookie for path, cookie in recorder.cookies if path == app_path]
        assert sent and COOKIE_NAME in sent[-1]
    finally:
        browser.close()
        if recorder is not None:
            recorder.shutdown()
            recorder.server_close()
