"""Who may use a `co-tui serve` server: one-time links, the secret path, browser sessions.

textual-serve has no authentication: whoever reaches its port drives the app (reads the
user's data, approves commands). And browsers send a cookie for 127.0.0.1 to every port of
127.0.0.1, so any other local web server would receive a cookie that is the key. Here:

- A link carries a random token, good once: the first visit trades it for a session cookie
  and is redirected to the app, which lives under a second secret, a random path prefix
  (/<prefix>/). The link printed at start waits for its first use; a link the running app
  asks for (/serve link) also expires after LINK_TTL_S. A used, expired or wrong link gets a
  page saying which, and how to get a new one.
- The cookie is scoped to Path=/<prefix>/ (HttpOnly, SameSite=Strict): the browser sends it
  only to addresses under the secret prefix, so another port's server never sees it, and the
  cookie alone (without the prefix) opens nothing.
- Requests another site or port's page makes (Sec-Fetch-Site), any cross-origin Origin and a
  WebSocket without Origin are refused, before a token is looked at (so such a request cannot
  spend one); a Host header with user info (`user@127.0.0.1`) is refused; on loopback, the Host
  must name loopback and this server's port (DNS rebinding).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import ipaddress
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from aiohttp import web

TOKEN_PARAM = "token"
COOKIE_NAME = "co_tui_session"
LINK_TTL_S = 600  # a link asked from the app: time to open it on another device
MAX_PENDING_LINKS = 32  # asked for and not used: the oldest beyond this is dropped
MAX_REMEMBERED_LINKS = 1024  # used or expired ones, to say so instead of "not valid"
LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}
# Fetch metadata a browser sends: only the app's own pages, or an address typed or opened
# from outside a page (a link pasted in), may reach the server.
ALLOWED_FETCH_SITES = {"none", "same-origin"}
# host, [v6], host:port, [v6]:port; nothing else (no user info, path or spaces).
_HOST = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9.-]+))(?::(?P<port>\d{1,5}))?"
)
# A session id a link may open (co-tui's are UUIDs); it becomes the app's --resume argument.
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}")

Handler = Callable[["web.Request"], Awaitable["web.StreamResponse"]]


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_host(value: str, default_port: int) -> tuple[str, int] | None:
    """A Host header as (host, port), or None when it is anything but a host and a port."""
    match = _HOST.fullmatch(value)
    if match is None:
        return None
    port = int(match["port"]) if match["port"] else default_port
    return (match["v6"] or match["name"]).lower(), port


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def _digest(token: str) -> bytes:
    # Links are kept by the hash of their token: a lookup's timing says nothing of a token.
    return hashlib.sha256(token.encode()).digest()


class LinkRefusal(Enum):
    """Why a link opens nothing; the value is what the refusal page says."""

    USED = "This link was already used: each link opens co-tui once."
    EXPIRED = f"This link expired: a link asked from the app works for {LINK_TTL_S // 60} minutes."
    WRONG = "This link is not valid."


@dataclass(frozen=True)
class Link:
    """A one-time link's promise: what it opens, until when."""

    resume: str | None  # the conversation its app opens; None: a new one
    expires_at: float | None  # time.monotonic(); None: waits for its first use


@dataclass(frozen=True)
class BrowserSession:
    """What a browser got for a link: its cookie, and the conversation its apps open."""

    cookie: str
    resume: str | None


@dataclass
class Gate:
    """One server's keys: the pending links, the secret path prefix, the sessions opened."""

    prefix: str
    secure: bool  # the public address is https: cookies are Secure
    loopback: bool  # bound to loopback: Host must name loopback and one of `ports`
    ports: frozenset[int]
    base_path: str = ""  # the public address's path, when a proxy serves it below one
    _links: OrderedDict[bytes, Link] = field(default_factory=OrderedDict)
    _spent: OrderedDict[bytes, LinkRefusal] = field(default_factory=OrderedDict)
    _sessions: dict[str, BrowserSession] = field(default_factory=dict)

    @property
    def app_path(self) -> str:
        return f"{self.base_path}/{self.prefix}/"

    def issue(self, resume: str | None = None, ttl_s: float | None = LINK_TTL_S) -> str:
        """A new link's token, good once (and for `ttl_s` seconds unless None)."""
        if resume is not None and not SESSION_ID.fullmatch(resume):
            raise ValueError("not a session id")
        self._expire()
        while len(self._links) >= MAX_PENDING_LINKS:
            oldest, _ = self._links.popitem(last=False)
            self._remember(oldest, LinkRefusal.EXPIRED)
        token = secrets.token_urlsafe(32)
        expires_at = None if ttl_s is None else time.monotonic() + ttl_s
        self._links[_digest(token)] = Link(resume, expires_at)
        return token

    def redeem(self, offered: str) -> BrowserSession | LinkRefusal:
        """The link's token, once: a new browser session; or why it opens nothing."""
        self._expire()
        key = _digest(offered)
        link = self._links.pop(key, None)
        if link is None:
            return self._spent.get(key, LinkRefusal.WRONG)
        self._remember(key, LinkRefusal.USED)
        session = BrowserSession(secrets.token_urlsafe(32), link.resume)
        self._sessions[session.cookie] = session
        return session

    def _expire(self) -> None:
        now = time.monotonic()
        for key, link in list(self._links.items()):
            if link.expires_at is not None and link.expires_at <= now:
                del self._links[key]
                self._remember(key, LinkRefusal.EXPIRED)

    def _remember(self, key: bytes, refusal: LinkRefusal) -> None:
        self._spent[key] = refusal
        while len(self._spent) > MAX_REMEMBERED_LINKS:
            self._spent.popitem(last=False)

    def refusal(self, request: web.Request) -> str | None:
        """Why the request is refused before anything else, or None."""
        parsed = parse_host(request.headers.get("Host", ""), 443 if self.secure else 80)
        if parsed is None:
            return "malformed Host header"
        if self.loopback and not (is_loopback(parsed[0]) and parsed[1] in self.ports):
            return "unexpected Host header"
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            return "cross-origin request refused"
        if origin is None and request.headers.get("Upgrade", "").lower() == "websocket":
            return "WebSocket without Origin refused"
        site = request.headers.get("Sec-Fetch-Site")
        if site is not None and site not in ALLOWED_FETCH_SITES:
            return "request from another site or port refused (paste the address instead)"
        return None

    def session_of(self, request: web.Request) -> BrowserSession | None:
        """The browser session of a request under the secret prefix, else None."""
        segment = request.path.split("/", 2)[1] if request.path.startswith("/") else ""
        if not _same(segment, self.prefix) or not request.path.startswith(f"/{self.prefix}/"):
            return None
        cookie = request.cookies.get(COOKIE_NAME)
        if cookie is None:
            return None
        return next((s for c, s in self._sessions.items() if _same(cookie, c)), None)


def make_gate(host: str, port: int, public_url: str) -> Gate:
    public = urlsplit(public_url)
    secure = public.scheme == "https"
    ports = {port, public.port or (443 if secure else 80)}
    return Gate(
        secrets.token_urlsafe(24),
        secure=secure,
        loopback=is_loopback(host),
        ports=frozenset(ports),
        base_path=public.path.rstrip("/"),
    )


REFUSAL_PAGE = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>co-tui: link refused</title>
<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"></head>
<body>
<h1>co-tui: this link opens nothing</h1>
<p>{reason}</p>
<p>For a new link, type <code>/serve link</code> in co-tui where it is already open in a
browser, or restart <code>co-tui serve</code> for a new first link.</p>
</body>
</html>
"""


def make_guard(gate: Gate) -> Any:
    """An aiohttp middleware: Host, Origin and fetch-site checks, then the link exchange at
    `/?token=`, then the prefix and the session cookie for everything else."""
    from aiohttp import web

    def forbidden(reason: str) -> web.Response:
        return web.Response(status=403, text=f"co-tui: {reason}\n")

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if reason := gate.refusal(request):
            return forbidden(reason)
        offered = request.query.get(TOKEN_PARAM)
        if offered is not None and request.path == "/":
            outcome = gate.redeem(offered)
            if isinstance(outcome, LinkRefusal):
                page = REFUSAL_PAGE.format(reason=html.escape(outcome.value))
                return web.Response(status=403, text=page, content_type="text/html")
            query = {k: v for k, v in request.query.items() if k != TOKEN_PARAM}
            location = str(request.rel_url.with_path(gate.app_path).with_query(query))
            response = web.Response(status=303, headers={"Location": location})
            response.set_cookie(
                COOKIE_NAME,
                outcome.cookie,
                path=gate.app_path,
                httponly=True,
                samesite="Strict",
                secure=gate.secure,
            )
            return response
        if gate.session_of(request) is None:
            return forbidden("open a link from `co-tui serve` or from /serve link in the app")
        return await handler(request)

    return guard
