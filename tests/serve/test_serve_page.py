"""What `co-tui serve`'s page is made of, fetched over plain HTTP as a browser would: every
file it references and every file those reference comes from the server itself, none names
another origin, and the policy that comes with it forbids every other origin."""

from __future__ import annotations

import re
from collections.abc import Iterator
from http.client import HTTPConnection
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from co_tui.serve.gate import COOKIE_NAME
from co_tui.serve.page import font_size, render_page
from tests.serve.process import ServeProcess, free_port

REFERENCES = re.compile(r"""(?:href|src)="([^"]+)"|url\(\s*["']?([^"')]+)""")
# scheme://host or //host, where the host has a dot (a name or an IPv4 address), and a port
ABSOLUTE_URL = re.compile(r"(?:[a-z][a-z0-9+.-]*:)?//((?:[a-z0-9-]+\.)+[a-z0-9-]+(?::\d+)?)", re.I)
CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    proc = ServeProcess(tmp_path, free_port())
    try:
        yield proc
    finally:
        proc.stop()


def fetch(url: str, cookie: str = "") -> tuple[int, dict[str, str], str]:
    parts = urlsplit(url)
    conn = HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        conn.request("GET", path, headers={"Cookie": cookie, "Sec-Fetch-Site": "same-origin"})
        response = conn.getresponse()
        body = response.read().decode("utf-8", "replace")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


def named_origins(text: str, kind: str) -> set[str]:
    """The hosts of the absolute URLs in `text` (a comment in CSS loads nothing)."""
    if kind == "css":
        text = CSS_COMMENT.sub("", text)
    return {m.group(1).lower() for m in ABSOLUTE_URL.finditer(text)}


def test_the_page_and_all_it_loads_come_from_the_server(server: ServeProcess) -> None:
    url = server.url()
    status, headers, _ = fetch(url)
    assert status == 303
    cookie = headers["set-cookie"].split(";", 1)[0]
    assert cookie.startswith(f"{COOKIE_NAME}=")
    page_url = urljoin(url, headers["location"])
    own = urlsplit(url).netloc

    pending, seen, kinds = [page_url], set(), {}
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        status, headers, body = fetch(current, cookie)
        assert status == 200, current
        policy = headers["content-security-policy"]
        assert "default-src 'none'" in policy and "http" not in policy and "*" not in policy
        kind = current.rsplit(".", 1)[-1] if "." in current.rsplit("/", 1)[-1] else "html"
        kinds[current] = kind
        if kind == "ttf":
            continue
        assert named_origins(body, kind) <= {own}, current
        for match in REFERENCES.finditer(body):
            reference = match.group(1) or match.group(2)
            if reference.startswith("data:"):
                continue
            target = urljoin(current, reference)
            assert urlsplit(target).netloc == own, f"{current} loads {target}"
            pending.append(target)

    loaded = sorted(u.rsplit("/", 1)[-1] for u in kinds if u != page_url)
    assert loaded == [
        "RobotoMono-Italic-VariableFont_wght.ttf",
        "RobotoMono-VariableFont_wght.ttf",
        "page.css",
        "page.js",
        "textual.js",
        "xterm.css",
    ]


def test_what_the_page_is_given_is_escaped() -> None:
    page = render_page(
        title='co-tui"><script>alert(1)</script>',
        static_path="/p/static/",
        page_path="/p/page/",
        websocket='ws://127.0.0.1:8000/p/ws" onload="alert(1)',
        font_px=16,
    )
    assert "<script>alert" not in page and '" onload=' not in page
    assert font_size("abc") == font_size("100000") == font_size(None) == 16
    assert font_size("20") == 20
