"""`co-tui serve`: the app in a browser through textual-serve, behind an access token.

textual-serve has no authentication: whoever reaches its port drives the app (reads the
user's data, approves commands). So every request must carry a random token: the printed
address has it as `?token=`, the first request trades it for an HttpOnly, SameSite=Strict
cookie and is redirected to a clean address; everything else without the cookie gets 403.
The WebSocket also checks Origin; on loopback, the Host header must name loopback (DNS
rebinding). The token is printed once and never logged (the access log is off).

Each browser connection starts its own app process: `python -m co_tui.serve [--model M]`.
"""

from __future__ import annotations

import argparse
import hmac
import importlib
import ipaddress
import logging
import os
import secrets
import shlex
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from aiohttp import web

# Tests only: "module:function" naming a factory that returns a pydantic-ai Model (such as a
# FunctionModel), used by the served app instead of resolving the configured provider.
TEST_MODEL_FACTORY_ENV = "CO_TUI_TEST_MODEL_FACTORY"
TOKEN_PARAM = "token"
LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}
INSTALL_HINT = "`co-tui serve` needs textual-serve: pip install 'co-tui[serve]'"

Echo = Callable[[str], None]
Handler = Callable[["web.Request"], Awaitable["web.StreamResponse"]]


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def default_public_url(host: str, port: int) -> str:
    """The address browsers use (the page tells them where the WebSocket is)."""
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def app_command(model: str | None) -> str:
    args = [sys.executable, "-m", "co_tui.serve"]
    if model:
        args += ["--model", model]
    return shlex.join(args)


def make_guard(token: str, cookie_name: str, *, secure: bool, loopback: bool) -> Any:
    """An aiohttp middleware: token check (query once, then cookie), Origin and Host checks."""
    from aiohttp import web

    def valid(candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate.encode(), token.encode())

    def forbidden(reason: str) -> web.Response:
        return web.Response(status=403, text=f"co-tui: {reason}\n")

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if loopback and not is_loopback(urlsplit(f"//{request.host}").hostname or ""):
            return forbidden("unexpected Host header")
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            return forbidden("cross-origin request refused")
        offered = request.query.get(TOKEN_PARAM)
        if offered is not None:
            if not valid(offered):
                return forbidden("wrong access token")
            # Trade the token for a cookie and drop it from the address bar and history.
            query = {k: v for k, v in request.query.items() if k != TOKEN_PARAM}
            location = str(request.rel_url.with_query(query))
            response = web.Response(status=303, headers={"Location": location})
            response.set_cookie(
                cookie_name, token, httponly=True, samesite="Strict", secure=secure, path="/"
            )
            return response
        if not valid(request.cookies.get(cookie_name)):
            return forbidden("open the address `co-tui serve` printed (it carries the token)")
        return await handler(request)

    return guard


def make_server(command: str, host: str, port: int, public_url: str, token: str) -> Any:
    from aiohttp import web
    from textual_serve.server import Server

    guard = make_guard(
        token,
        f"co_tui_serve_{port}",  # cookies ignore ports: one name per server
        secure=public_url.startswith("https"),
        loopback=is_loopback(host),
    )

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(guard)
            return app

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
                access_log=None,  # request lines would carry the token
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
    echo("Open that address in a browser; the token is shown only here. Ctrl+C stops.")
    server = make_server(app_command(model), host, port, public_url, token)
    server.serve()
    return 0


# -- the served app process ------------------------------------------------------------


def _test_model() -> Any | None:
    spec = os.environ.get(TEST_MODEL_FACTORY_ENV)
    if not spec:
        return None
    module, _, func = spec.partition(":")
    return getattr(importlib.import_module(module), func)()


def run_served_app(argv: list[str]) -> None:
    """One browser session's app (textual-serve runs this with its web driver)."""
    parser = argparse.ArgumentParser(prog="co_tui.serve")
    parser.add_argument("--model")
    args = parser.parse_args(argv)
    # The app's stdout is the web driver's channel: nothing else may print there.
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    from co_tui.config import load_settings

    settings = load_settings(Path.cwd(), overrides={"model": args.model})
    test_model = _test_model()
    if test_model is None:
        from co_tui.tui.launch import launch_app

        launch_app(settings)
        return
    import asyncio

    from co_tui.agent import build_agent
    from co_tui.tui.app import CoApp

    app = CoApp(settings, bundle=build_agent(settings, model=test_model, instructions="test"))
    try:
        app.run()
    finally:
        if app.deps is not None:
            asyncio.run(app.deps.sandbox.cleanup())


if __name__ == "__main__":
    run_served_app(sys.argv[1:])
