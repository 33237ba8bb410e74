"""`co-tui serve`: the app in a browser through textual-serve, behind a one-time address.

textual-serve has no authentication: whoever reaches its port drives the app (reads the
user's data, approves commands). And browsers send a cookie for 127.0.0.1 to every port of
127.0.0.1, so any other local web server would receive a cookie that is the key. Here:

- The printed address carries a random token, good once: the first visit trades it for a
  session cookie and is redirected to the app, which lives under a second secret, a random
  path prefix (/<prefix>/). The token works once, so a copy of the address is worth nothing.
- The cookie is scoped to Path=/<prefix>/ (HttpOnly, SameSite=Strict): the browser sends it
  only to addresses under the secret prefix, so another port's server never sees it, and the
  cookie alone (without the prefix) opens nothing.
- Requests another site or port's page makes (Sec-Fetch-Site), any cross-origin Origin and a
  WebSocket without Origin are refused; a Host header with user info (`user@127.0.0.1`)
  is refused; on loopback the Host must name loopback and this server's port (DNS rebinding).
- Responses carry no-referrer (the prefix never leaves in a Referer), no-store and
  frame-ancestors 'none'. The token is printed once and never logged (no access log).

Each browser connection starts its own app process: `python -m co_tui.serve.server [--model M]`.
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import logging
import os
import re
import secrets
import shlex
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from co_tui.shims import install_shims

if TYPE_CHECKING:
    from aiohttp import web

TOKEN_PARAM = "token"
COOKIE_NAME = "co_tui_session"
LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}
INSTALL_HINT = "`co-tui serve` needs textual-serve: pip install 'co-tui[serve]'"
# Fetch metadata a browser sends: only the app's own pages, or an address typed or opened
# from outside a page (the printed one), may reach the server.
ALLOWED_FETCH_SITES = {"none", "same-origin"}
SECURITY_HEADERS = {
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "frame-ancestors 'none'",
}
# host, [v6], host:port, [v6]:port; nothing else (no user info, path or spaces).
_HOST = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9.-]+))(?::(?P<port>\d{1,5}))?"
)

Echo = Callable[[str], None]
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


def default_public_url(host: str, port: int) -> str:
    """The address browsers use (the page tells them where the WebSocket is)."""
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def app_command(model: str | None) -> str:
    args = [sys.executable, "-m", "co_tui.serve.server"]
    if model:
        args += ["--model", model]
    return shlex.join(args)


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


@dataclass
class Gate:
    """One server's keys: the one-time token, the secret path prefix, the sessions opened."""

    token: str | None
    prefix: str
    secure: bool  # the public address is https: cookies are Secure
    loopback: bool  # bound to loopback: Host must name loopback and one of `ports`
    ports: frozenset[int]
    base_path: str = ""  # the public address's path, when a proxy serves it below one
    sessions: set[str] = field(default_factory=set)

    @property
    def app_path(self) -> str:
        return f"{self.base_path}/{self.prefix}/"

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

    def redeem(self, offered: str) -> str | None:
        """The token, once: a new session id; None for a wrong or used token."""
        if self.token is None or not _same(offered, self.token):
            return None
        self.token = None
        session = secrets.token_urlsafe(32)
        self.sessions.add(session)
        return session

    def admits(self, request: web.Request) -> bool:
        """Under the secret prefix, with a session cookie."""
        segment = request.path.split("/", 2)[1] if request.path.startswith("/") else ""
        if not _same(segment, self.prefix) or not request.path.startswith(f"/{self.prefix}/"):
            return False
        cookie = request.cookies.get(COOKIE_NAME)
        return cookie is not None and any(_same(cookie, s) for s in self.sessions)


def make_guard(gate: Gate) -> Any:
    """An aiohttp middleware: Host, Origin and fetch-site checks, then the token exchange at
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
            session = gate.redeem(offered)
            if session is None:
                return forbidden(
                    "this address is wrong or was already used (it works once); "
                    "restart `co-tui serve` for a new one"
                )
            query = {k: v for k, v in request.query.items() if k != TOKEN_PARAM}
            location = str(request.rel_url.with_path(gate.app_path).with_query(query))
            response = web.Response(status=303, headers={"Location": location})
            response.set_cookie(
                COOKIE_NAME,
                session,
                path=gate.app_path,
                httponly=True,
                samesite="Strict",
                secure=gate.secure,
            )
            return response
        if not gate.admits(request):
            return forbidden("open the address `co-tui serve` printed (it works once)")
        return await handler(request)

    return guard


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)


def make_gate(host: str, port: int, public_url: str, token: str) -> Gate:
    public = urlsplit(public_url)
    secure = public.scheme == "https"
    ports = {port, public.port or (443 if secure else 80)}
    return Gate(
        token,
        secrets.token_urlsafe(24),
        secure=secure,
        loopback=is_loopback(host),
        ports=frozenset(ports),
        base_path=public.path.rstrip("/"),
    )


def make_server(command: str, host: str, port: int, public_url: str, gate: Gate) -> Any:
    from aiohttp import web
    from textual_serve.server import Server

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            # textual-serve's routes (/, /ws, /static, /download) under the secret prefix.
            # (textual.js links file downloads at the origin root; co-tui delivers none.)
            inner = await super()._make_app()
            outer = web.Application(middlewares=[make_guard(gate)])
            outer.add_subapp(f"/{gate.prefix}", inner)
            outer.on_response_prepare.append(_security_headers)
            return outer

        def initialize_logging(self) -> None:
            # Plain records: textual-serve's handler prints tracebacks with local variables.
            logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")

        def serve(self, debug: bool = False) -> None:
            self.debug = debug
            self.initialize_logging()
            web.run_app(
                self._make_app(),
                host=self.host,
                port=self.port,
                access_log=None,  # request lines would carry the token and the prefix
                print=lambda *args: None,
            )

    return GuardedServer(command, host=host, port=port, title="co-tui", public_url=public_url)


def serve_command(
    host: str, port: int, public_url: str | None, model: str | None, echo: Echo
) -> int:
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        echo(f"co-tui: {INSTALL_HINT}")
        return 1
    public_url = (public_url or default_public_url(host, port)).rstrip("/")
    token = secrets.token_urlsafe(32)
    if not is_loopback(host):
        echo(
            f"WARNING: co-tui is listening on {host}:{port}, reachable from other machines. "
            "Whoever has the address below can read your data and approve commands as you. "
            "The connection is plain HTTP: use it only on a network you trust, or put TLS in "
            "front (and pass --public-url https://...)."
        )
    echo(f"co-tui is served at {public_url}/?{TOKEN_PARAM}={token}")
    echo(
        "Open that address in a browser: it works once (the browser keeps a session), and is "
        "shown only here. Ctrl+C stops."
    )
    gate = make_gate(host, port, public_url, token)
    server = make_server(app_command(model), host, port, public_url, gate)
    server.serve()
    return 0


# -- the served app process ------------------------------------------------------------


def run_served_app(argv: list[str]) -> None:
    """One browser session's app (textual-serve runs this with its web driver)."""
    install_shims()  # before anything imports openai, pydantic-ai or Textual
    parser = argparse.ArgumentParser(prog="co_tui.serve.server")
    parser.add_argument("--model")
    args = parser.parse_args(argv)
    # The app's stdout is the web driver's channel: nothing else may print there.
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    from co_tui.config.data_at_rest import protect_data_at_rest
    from co_tui.config.trust import load_project_settings
    from co_tui.tui.launch import launch_app

    loaded = load_project_settings(Path.cwd(), overrides={"model": args.model})
    protect_data_at_rest(loaded.settings)  # data folder 0700, files 0600; secrets remembered
    sys.exit(launch_app(loaded))


if __name__ == "__main__":
    run_served_app(sys.argv[1:])
