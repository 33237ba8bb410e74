"""Where web_fetch may connect: domain lists, and no loopback/private/link-local/metadata
address unless the host is listed in `web_fetch_private_hosts`.

The caller resolves the name here, checks every address, and connects to a checked address
(not to the name again), so a DNS answer that changes between check and connect (rebinding)
cannot steer the request to a private address. Every redirect hop goes through this again.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable

from co_tui.web.config import WebConfig

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance metadata endpoints (AWS/GCP/Azure/OpenStack, AWS IPv6, Alibaba).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class FetchRefused(Exception):
    """The URL may not be fetched; the message says why, for the model and the user."""


def normalize_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _entry(entry: str) -> str:
    return normalize_host(entry).removeprefix("*.").lstrip(".")


def host_matches(host: str, entries: Iterable[str]) -> bool:
    """True when `host` is an entry or a subdomain of one ('docs.python.org' ~ 'python.org')."""
    host = normalize_host(host)
    for raw in entries:
        entry = _entry(raw)
        if entry and (host == entry or host.endswith("." + entry)):
            return True
    return False


def check_domain(host: str, config: WebConfig) -> None:
    if host_matches(host, config.blocked_domains):
        raise FetchRefused(f"{host} is in web_fetch_blocked_domains")
    if config.allowed_domains and not host_matches(host, config.allowed_domains):
        raise FetchRefused(
            f"{host} is not in web_fetch_allowed_domains ({', '.join(config.allowed_domains)})"
        )


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(ip: IPAddress) -> str | None:
    """Why this address is not a public one, or None when it is."""
    inner = _embedded_ipv4(ip)
    if inner is not None:
        return address_problem(inner)
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private network address"
    if not ip.is_global:
        return "a non-public address"
    return None


def parse_ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(normalize_host(text).split("%", 1)[0])
    except ValueError:
        return None


async def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to, in resolver order (IP literals resolve to themselves)."""
    literal = parse_ip(host)
    if literal is not None:
        return [literal]
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(normalize_host(host), port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchRefused(f"cannot resolve {host}: {exc.strerror or exc}") from None
    addresses: list[IPAddress] = []
    for info in infos:
        ip = parse_ip(str(info[4][0]))
        if ip is not None and ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise FetchRefused(f"cannot resolve {host}: no addresses")
    return addresses


async def checked_addresses(host: str, port: int, config: WebConfig) -> list[IPAddress]:
    """Resolve `host` and refuse unless every address is public (or the host is listed in
    web_fetch_private_hosts). All must pass: one bad record is enough to refuse."""
    addresses = await resolve(host, port)
    if normalize_host(host) in {normalize_host(h) for h in config.private_hosts}:
        return addresses
    for ip in addresses:
        problem = address_problem(ip)
        if problem is not None:
            via = "" if parse_ip(host) is not None else f" ({host} resolves to {ip})"
            raise FetchRefused(
                f"refused to fetch {problem}{via}: only public addresses are fetched. To allow "
                f"it, add {normalize_host(host)!r} to web_fetch_private_hosts in settings.json"
            )
    return addresses
