"""The page a browser gets: textual-serve's terminal in co-tui's own HTML (page/index.html),
with nothing from outside this machine.

textual-serve's page loads its font from Google Fonts and keeps its script and styles inline;
this one serves the font from textual-serve's own static folder, moves the rest to
page/static/ (page.js also gives the terminal the keyboard once it connects), and every
response carries a Content-Security-Policy that lets the page load only from its own origin.
"""

from __future__ import annotations

import html
from pathlib import Path
from string import Template
from urllib.parse import urlsplit

PAGE_DIR = Path(__file__).parent / "page"
PAGE_STATIC = PAGE_DIR / "static"
PAGE_ROUTE = "/page"  # page/static/, under the secret prefix beside textual-serve's /static
# Only this origin: its scripts, styles, font, images, and the WebSocket ('self' covers ws:).
# Inline style: xterm.js adds <style> elements as it runs; a style can load nothing from
# elsewhere (font-src and img-src) and no page text is HTML (the terminal is a canvas).
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "font-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Referrer-Policy": "no-referrer",  # the secret prefix never leaves in a Referer
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
}
DEFAULT_FONT_SIZE = 16


def font_size(query_value: str | None) -> int:
    """textual-serve's `?fontsize=`: a number of pixels within reason, else the default."""
    try:
        size = int(query_value or DEFAULT_FONT_SIZE)
    except ValueError:
        return DEFAULT_FONT_SIZE
    return size if 6 <= size <= 72 else DEFAULT_FONT_SIZE


def websocket_url(public_url: str, path: str) -> str:
    """The WebSocket's address for the page at `public_url` (ws: or wss: as it is http(s))."""
    public = urlsplit(public_url)
    scheme = "wss" if public.scheme == "https" else "ws"
    return f"{scheme}://{public.netloc}{public.path.rstrip('/')}{path}"


def render_page(
    *, title: str, static_path: str, page_path: str, websocket: str, font_px: int
) -> str:
    """The page's HTML. Paths end with '/'; every value is escaped."""
    template = Template((PAGE_DIR / "index.html").read_text(encoding="utf-8"))
    values = {
        "title": title,
        "static": static_path,
        "page": page_path,
        "websocket_url": websocket,
        "font_size": str(font_px),
    }
    return template.substitute({k: html.escape(v, quote=True) for k, v in values.items()})
