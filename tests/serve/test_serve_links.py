"""Links for another browser, asked from the running app (/serve link), against a real
`co-tui serve` over plain HTTP: each opens one session, a used, expired, guessed or
cross-origin one opens nothing and says why, and the socket the apps ask on takes nothing
but a well-formed request from the user's own processes."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import stat
from collections.abc import Iterator
from http.client import HTTPConnection
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from co_tui.protocol.serve_links import LINKS_SOCKET_ENV, IssuedLink, request_link
from co_tui.serve.gate import COOKIE_NAME, LINK_TTL_S, Gate, LinkRefusal
from tests.serve.process import ServeProcess, free_port

FROM_THE_TERMINAL = {"Sec-Fetch-Site": "none"}  # what a browser sends for a pasted address


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServeProcess]:
    proc = ServeProcess(tmp_path, free_port())
    try:
        proc.url()
        # As in an app the server started: its environment names the socket.
        monkeypatch.setenv(LINKS_SOCKET_ENV, str(proc.links_socket()))
        yield proc
    finally:
        proc.stop()


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    parts = urlsplit(url)
    conn = HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        conn.request("GET", path, headers={**FROM_THE_TERMINAL, **(headers or {})})
        response = conn.getresponse()
        body = response.read().decode()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


def ask(resume: str | None = None) -> IssuedLink:
    return asyncio.run(request_link(resume))


def test_each_link_from_the_app_opens_one_session(server: ServeProcess) -> None:
    first, second = ask(), ask("0b5e6a9e-6f4a-4d57-9d3a-2c1d0e5f7a11")
    assert first.url != second.url and first.valid_for_s == LINK_TTL_S
    assert first.loopback_only  # served on 127.0.0.1: the app says other devices cannot reach it
    assert urlsplit(first.url).netloc == urlsplit(server.url()).netloc

    status, headers, _ = get(first.url)
    assert status == 303
    app_path, cookie = headers["location"], headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and f"Path={app_path}" in cookie
    session = cookie.split(";", 1)[0].partition("=")[2]
    assert (
        get(server.url().rsplit("/", 1)[0] + app_path, {"Cookie": f"{COOKIE_NAME}={session}"})[0]
        == 200
    )

    status, _, page = get(first.url)  # used
    assert status == 403 and "already used" in page and "/serve link" in page
    assert get(second.url)[0] == 303  # another link is its own
    assert "already used" in get(second.url)[2]
    assert "".join(server.lines).count("token=") == 1  # minted links are never printed


def test_a_guessed_or_cross_origin_link_opens_nothing_and_spends_nothing(
    server: ServeProcess,
) -> None:
    link = ask()
    base, token = link.url.split("token=", 1)
    status, headers, page = get(f"{base}token={'A' * len(token)}")
    assert status == 403 and "not valid" in page and "set-cookie" not in headers
    assert "text/html" in headers["content-type"]
    assert "default-src 'none'" in headers["content-security-policy"]

    # Replayed from another origin (a page that learnt the link, another port, a rebound
    # DNS name): refused before the token is looked at, so the link is still the user's.
    port = urlsplit(link.url).port
    for replay in (
        {"Origin": "http://evil.example"},
        {"Origin": f"http://127.0.0.1:{free_port()}"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Host": f"evil.example:{port}"},
        {"Host": f"127.0.0.1:{free_port()}"},
    ):
        status, headers, _ = get(link.url, replay)
        assert status == 403 and "set-cookie" not in headers, replay
    assert get(link.url)[0] == 303


def test_the_socket_takes_only_a_well_formed_request(server: ServeProcess) -> None:
    path = server.links_socket()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

    def exchange(line: bytes) -> bytes:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(10)
            conn.connect(str(path))
            conn.sendall(line)
            answer = b""
            while chunk := conn.recv(4096):
                answer += chunk
            return answer

    # A session id becomes the app's --resume argument: only an id's characters pass.
    for resume in ("--model=evil", "../../x", "a b", "x;rm -rf ~", "a" * 65, ""):
        answer = json.loads(exchange(json.dumps({"resume": resume}).encode() + b"\n"))
        assert set(answer) == {"error"}, resume
    for garbage in (b"not json\n", b"[1, 2]\n", b'{"resume": 7}\n', b"\xff\xfe\n"):
        assert set(json.loads(exchange(garbage))) == {"error"}, garbage
    assert exchange(b"{" + b" " * 10_000 + b"\n") == b""  # too long: no answer at all
    assert set(json.loads(exchange(b'{"resume": null}\n'))) == {
        "url",
        "valid_for_s",
        "loopback_only",
    }


def test_the_socket_goes_with_the_server(tmp_path: Path) -> None:
    proc = ServeProcess(tmp_path, free_port())
    try:
        proc.url()
        folder = proc.links_socket().parent
        proc.proc.send_signal(signal.SIGTERM)  # as `kill` or a closing terminal stops it
        proc.proc.wait(10)
        assert not folder.exists()
    finally:
        proc.stop()


def test_an_app_that_is_not_served_is_told_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from co_tui.protocol.serve_links import LinkUnavailable

    monkeypatch.delenv(LINKS_SOCKET_ENV, raising=False)
    with pytest.raises(LinkUnavailable, match="co-tui serve"):
        ask()
    monkeypatch.setenv(LINKS_SOCKET_ENV, "/nonexistent/links.sock")
    with pytest.raises(LinkUnavailable, match="did not answer"):
        ask()


def test_a_link_expires() -> None:
    gate = Gate("prefix", secure=False, loopback=True, ports=frozenset({8000}))
    token = gate.issue(ttl_s=0)
    assert gate.redeem(token) is LinkRefusal.EXPIRED
    kept = gate.issue(ttl_s=None)  # the link printed at start waits for its first use
    assert not isinstance(gate.redeem(kept), LinkRefusal)
    assert gate.redeem(kept) is LinkRefusal.USED
    assert gate.redeem("guessed") is LinkRefusal.WRONG
