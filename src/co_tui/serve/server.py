"""`co-tui serve`: the app in a browser through textual-serve, behind one-time links.

Who gets in: gate.py (one-time links, the secret path, browser sessions). What the page
loads: page.py (only this origin). Links for another browser, asked from a running app:
links.py. Responses carry no-referrer, no-store and the page's Content-Security-Policy; a
link is printed once and never logged (no access log).

Each browser connection starts its own app process:
`python -m co_tui.serve.server [--model M] [--resume=ID]`, resuming the conversation the
browser's link was asked from, if any.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shlex
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_tui.serve.gate import LINK_TTL_S, TOKEN_PARAM, Gate, is_loopback, make_gate, make_guard
from co_tui.serve.links import LinkDesk
from co_tui.serve.page import (
    PAGE_ROUTE,
    PAGE_STATIC,
    SECURITY_HEADERS,
    font_size,
    render_page,
    websocket_url,
)
from co_tui.shims import install_shims

if TYPE_CHECKING:
    from aiohttp import web

INSTALL_HINT = "`co-tui serve` needs textual-serve: pip install 'co-tui[serve]'"
log = logging.getLogger("co_tui.serve")

Echo = Callable[[str], None]


def default_public_url(host: str, port: int) -> str:
    """The address browsers use (the page tells them where the WebSocket is)."""
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def app_command(model: str | None, resume: str | None = None) -> str:
    args = [sys.executable, "-m", "co_tui.serve.server"]
    if model:
        args += ["--model", model]
    if resume:
        args.append(f"--resume={resume}")  # one word: an id cannot pass for an option
    return shlex.join(args)


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)


def make_server(model: str | None, host: str, port: int, public_url: str, gate: Gate) -> Any:
    from aiohttp import web
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    desk = LinkDesk(gate, public_url)

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            # textual-serve's routes (/, /ws, /static, /download) and the page's own files
            # under the secret prefix. (textual.js links file downloads at the origin root;
            # co-tui delivers none.)
            inner = await super()._make_app()
            inner.router.add_static(PAGE_ROUTE, PAGE_STATIC)
            outer = web.Application(middlewares=[make_guard(gate)])
            outer.add_subapp(f"/{gate.prefix}", inner)
            outer.on_response_prepare.append(_security_headers)
            outer.on_startup.append(lambda _app: desk.open())
            outer.on_cleanup.append(lambda _app: desk.close())
            return outer

        async def handle_index(self, request: web.Request) -> web.Response:
            page = render_page(
                title="co-tui",
                static_path=f"{gate.app_path}static/",
                page_path=f"{gate.app_path}{PAGE_ROUTE.strip('/')}/",
                websocket=websocket_url(self.public_url, f"/{gate.prefix}/ws"),
                font_px=font_size(request.query.get("fontsize")),
            )
            return web.Response(text=page, content_type="text/html")

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            # textual-serve's, with the app command of this browser's session: the
            # conversation its link was asked from.
            session = gate.session_of(request)  # the guard let only a session through
            resume = session.resume if session is not None else None
            websocket = web.WebSocketResponse(heartbeat=15)
            width = _cells(request.query.get("width"), 80)
            height = _cells(request.query.get("height"), 24)
            app_service: AppService | None = None

            async def close() -> None:
                await websocket.close()

            try:
                await websocket.prepare(request)
                app_service = AppService(
                    app_command(model, resume),
                    write_bytes=websocket.send_bytes,
                    write_str=websocket.send_str,
                    close=close,
                    download_manager=self.download_manager,
                    debug=self.debug,
                )
                await app_service.start(width, height)
                try:
                    await self._process_messages(websocket, app_service)
                finally:
                    await app_service.stop()
            except asyncio.CancelledError:
                await websocket.close()
            except Exception:
                log.exception("the app's connection failed")
            finally:
                if app_service is not None:
                    await app_service.stop()
            return websocket

        async def on_startup(self, app: web.Application) -> None:
            # textual-serve's banner names the address without a link: co-tui printed its own.
            pass

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

    return GuardedServer(
        app_command(model), host=host, port=port, title="co-tui", public_url=public_url
    )


def _cells(value: str | None, default: int) -> int:
    try:
        return max(1, min(int(value or default), 1000))
    except ValueError:
        return default


def serve_command(
    host: str, port: int, public_url: str | None, model: str | None, echo: Echo
) -> int:
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        echo(f"co-tui: {INSTALL_HINT}")
        return 1
    public_url = (public_url or default_public_url(host, port)).rstrip("/")
    if not is_loopback(host):
        echo(
            f"WARNING: co-tui is listening on {host}:{port}, reachable from other machines. "
            "Whoever has a link below can read your data and approve commands as you. "
            "The connection is plain HTTP: use it only on a network you trust, or put TLS in "
            "front (and pass --public-url https://...)."
        )
    gate = make_gate(host, port, public_url)
    token = gate.issue(ttl_s=None)
    echo(f"co-tui is served at {public_url}/?{TOKEN_PARAM}={token}")
    echo(
        "Open that address in a browser: it works once (the browser keeps a session), and is "
        "shown only here. For another browser or device, type /serve link in the app: a new "
        f"link to that conversation, good once within {LINK_TTL_S // 60} minutes. Ctrl+C stops."
    )
    server = make_server(model, host, port, public_url, gate)
    server.serve()
    return 0


# -- the served app process ------------------------------------------------------------


def run_served_app(argv: list[str]) -> None:
    """One browser session's app (textual-serve runs this with its web driver)."""
    install_shims()  # before anything imports openai, pydantic-ai or Textual
    parser = argparse.ArgumentParser(prog="co_tui.serve.server")
    parser.add_argument("--model")
    parser.add_argument("--resume")
    args = parser.parse_args(argv)
    # The app's stdout is the web driver's channel: nothing else may print there.
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    from co_tui.config.data_at_rest import protect_data_at_rest
    from co_tui.config.trust import load_project_settings
    from co_tui.tui.launch import launch_app

    loaded = load_project_settings(Path.cwd(), overrides={"model": args.model})
    protect_data_at_rest(loaded.settings)  # data folder 0700, files 0600; secrets remembered
    sys.exit(launch_app(loaded, resume=args.resume))


if __name__ == "__main__":
    run_served_app(sys.argv[1:])
