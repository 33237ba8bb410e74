"""fetch_page: GET a URL hop by hop, checking every hop's host and address before connecting.

Each hop connects to the address that was checked (the URL's host is replaced by the IP;
the Host header and TLS SNI keep the name), so DNS cannot answer differently at connect
time. Only text responses are read, at most `max_bytes` of them, within `timeout` seconds
for the whole fetch.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import httpx

from co_tui.web.config import WebConfig
from co_tui.web.ssrf import FetchRefused, IPAddress, check_domain, checked_addresses, parse_ip

REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "co-tui/0.1 (+https://github.com/co-tui; personal assistant web_fetch)"
ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,text/*;q=0.8,*/*;q=0.1"
_TEXT_TYPES = ("application/xhtml+xml", "application/json", "application/xml")
HTML_TYPES = ("text/html", "application/xhtml+xml")


class FetchFailed(Exception):
    """The fetch was allowed but did not produce a page (HTTP error, size, type, network)."""


@dataclass
class Page:
    url: str
    final_url: str
    status: int
    content_type: str  # media type only, lower-case: "text/html"
    text: str
    truncated: bool = False  # the body passed max_bytes and was cut
    redirects: list[str] = field(default_factory=list)

    @property
    def is_html(self) -> bool:
        return self.content_type in HTML_TYPES


def is_text_type(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type in _TEXT_TYPES
        or media_type.endswith(("+xml", "+json"))
    )


def check_url(url: httpx.URL) -> str:
    if url.scheme not in ("http", "https"):
        raise FetchRefused(f"only http and https URLs are fetched, not {url.scheme or 'none'}:")
    if not url.host:
        raise FetchRefused(f"the URL {url} has no host")
    if url.userinfo:
        raise FetchRefused("URLs with a user name or password are not fetched")
    return url.host


def _pinned(url: httpx.URL, ip: IPAddress) -> tuple[httpx.URL, dict[str, str], dict[str, str]]:
    """(URL to connect to, headers, request extensions) for connecting to `ip` as `url`."""
    headers = {"Host": url.netloc.decode("ascii"), "User-Agent": USER_AGENT, "Accept": ACCEPT}
    extensions: dict[str, str] = {}
    if url.scheme == "https" and parse_ip(url.host) is None:
        extensions["sni_hostname"] = url.host
    return url.copy_with(host=str(ip)), headers, extensions


async def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():  # decoded: the cap also bounds gzip bombs
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


def _decode(body: bytes, response: httpx.Response) -> str:
    encoding = response.charset_encoding or "utf-8"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


async def _hop(url: httpx.URL, config: WebConfig, redirects: list[str], start: str) -> Page | str:
    """One request, to the first checked address that accepts a connection.
    Returns the page, or the Location of a redirect."""
    host = check_url(url)
    check_domain(host, config)
    port = url.port or (443 if url.scheme == "https" else 80)
    addresses = await checked_addresses(host, port, config)
    error: httpx.ConnectError | None = None
    for ip in addresses:  # e.g. an AAAA record on a machine without an IPv6 route
        try:
            return await _request(url, ip, config, redirects, start)
        except httpx.ConnectError as exc:
            error = exc
    raise FetchFailed(f"cannot connect to {host} ({error})")


async def _request(
    url: httpx.URL, ip: IPAddress, config: WebConfig, redirects: list[str], start: str
) -> Page | str:
    target, headers, extensions = _pinned(url, ip)
    async with (
        httpx.AsyncClient(
            follow_redirects=False, trust_env=False, timeout=config.timeout
        ) as client,
        client.stream("GET", target, headers=headers, extensions=extensions) as response,
    ):
        if response.status_code in REDIRECT_CODES:
            location = response.headers.get("location")
            if not location:
                raise FetchFailed(f"HTTP {response.status_code} redirect without a Location")
            return location
        if response.status_code >= 400:
            reason = response.reason_phrase or ""
            raise FetchFailed(f"HTTP {response.status_code} {reason}".strip() + f" from {url}")
        media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if not is_text_type(media_type):
            raise FetchFailed(
                f"{url} is {media_type or 'of unknown type'}, not a text or HTML page; "
                "web_fetch only reads text"
            )
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > config.max_bytes:
            raise FetchFailed(
                f"{url} is {int(length):,} bytes, over the {config.max_bytes:,}-byte limit"
            )
        body, truncated = await _read_capped(response, config.max_bytes)
        return Page(start, str(url), response.status_code, media_type,
                    _decode(body, response), truncated, redirects)  # fmt: skip


async def fetch_page(url: str, config: WebConfig) -> Page:
    """Raises FetchRefused (policy, SSRF) or FetchFailed (everything else)."""
    try:
        current = httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        raise FetchRefused(f"invalid URL: {exc}") from None
    redirects: list[str] = []
    try:
        async with asyncio.timeout(config.timeout):
            for _ in range(config.max_redirects + 1):
                result = await _hop(current, config, redirects, url)
                if isinstance(result, Page):
                    return result
                try:
                    current = current.join(result)
                except httpx.InvalidURL as exc:
                    raise FetchFailed(f"invalid redirect Location {result!r}: {exc}") from None
                redirects.append(str(current))
    except TimeoutError:
        raise FetchFailed(f"{url} did not answer within {config.timeout:g} seconds") from None
    except httpx.TimeoutException:
        raise FetchFailed(f"{url} did not answer within {config.timeout:g} seconds") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"cannot fetch {url}: {exc or type(exc).__name__}") from None
    raise FetchFailed(f"more than {config.max_redirects} redirects starting at {url}")
