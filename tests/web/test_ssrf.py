"""SSRF rules: loopback, private, link-local and metadata addresses are refused unless the
host is listed in web_fetch_private_hosts, directly, through a redirect, or through DNS."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from co_tui.config.settings import Settings
from co_tui.web.config import WebConfig
from co_tui.web.fetch import fetch_page
from co_tui.web.ssrf import FetchRefused, address_problem, host_matches
from tests.web.conftest import tool_turn
from tests.web.server import WebServer


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.8.9.10", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.1.2.3", "a private network address"),
        ("172.16.0.1", "a private network address"),
        ("192.168.1.1", "a private network address"),
        ("fd12:3456::1", "a private network address"),
        ("169.254.10.10", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("0.0.0.0", "an unspecified address"),
        ("100.64.1.1", "a non-public address"),
        ("224.0.0.1", "a multicast address"),
        ("::ffff:127.0.0.1", "a loopback address"),  # IPv4-mapped
        ("64:ff9b::a9fe:a9fe", "a cloud metadata address"),  # NAT64 of 169.254.169.254
        ("2002:7f00:1::", "a loopback address"),  # 6to4 of 127.0.0.1
        ("93.184.215.14", None),
        ("2606:4700::1111", None),
    ],
)
def test_address_classes(address: str, problem: str | None) -> None:
    assert address_problem(ipaddress.ip_address(address)) == problem


def test_domain_matching() -> None:
    assert host_matches("docs.python.org", ["python.org"])
    assert host_matches("python.org.", ["*.python.org"])
    assert host_matches("PYTHON.org", [".python.org"])
    assert not host_matches("evilpython.org", ["python.org"])
    assert not host_matches("python.org.evil.com", ["python.org"])


async def test_loopback_is_refused_by_default(tmp_path: Path, site: WebServer) -> None:
    turn = await tool_turn(tmp_path, Settings(), "web_fetch", {"url": f"{site.url}/article"})
    out = turn.returned
    assert out["error"] is True and out["refused"] is True
    assert "refused to fetch a loopback address" in out["display"]
    assert "web_fetch_private_hosts" in out["display"]
    assert site.hits == []


async def test_a_name_resolving_to_loopback_is_refused(site: WebServer) -> None:
    # 127.0.0.1 is allowed, but "localhost" is another host: its addresses are checked.
    config = WebConfig(private_hosts=["127.0.0.1"])
    with pytest.raises(FetchRefused, match=r"\(localhost resolves to (127\.0\.0\.1|::1)\)"):
        await fetch_page(f"http://localhost:{site.port}/article", config)
    assert site.hits == []


async def test_a_redirect_to_loopback_is_refused(
    tmp_path: Path, site: WebServer, other_site: WebServer
) -> None:
    settings = Settings(web_fetch_private_hosts=["127.0.0.1"])
    secret = f"http://localhost:{other_site.port}/plain"
    turn = await tool_turn(
        tmp_path, settings, "web_fetch", {"url": f"{site.url}/redirect?to={secret}"}
    )
    assert (
        "refused" in turn.returned["display"]
        and "localhost resolves to" in turn.returned["display"]
    )
    assert site.hits == ["/redirect"]
    assert other_site.hits == []


@pytest.mark.parametrize(
    "target",
    ["http://169.254.169.254/latest/meta-data/", "http://[::1]:1/", "http://10.0.0.1/admin"],
)
async def test_a_redirect_to_internal_addresses_is_refused(site: WebServer, target: str) -> None:
    config = WebConfig(private_hosts=["127.0.0.1"])
    with pytest.raises(FetchRefused, match="refused to fetch a"):
        await fetch_page(f"{site.url}/redirect?to={target}", config)


async def test_listing_the_host_allows_it(site: WebServer) -> None:
    page = await fetch_page(f"{site.url}/plain", WebConfig(private_hosts=["127.0.0.1"]))
    assert page.text == "just text\n"


async def test_blocked_domains_win(tmp_path: Path, site: WebServer) -> None:
    settings = Settings(
        web_fetch_private_hosts=["127.0.0.1"], web_fetch_blocked_domains=["127.0.0.1"]
    )
    turn = await tool_turn(tmp_path, settings, "web_fetch", {"url": f"{site.url}/plain"})
    assert "127.0.0.1 is in web_fetch_blocked_domains" in turn.returned["display"]
    assert site.hits == []


async def test_allowed_domains_restrict_every_hop(
    tmp_path: Path, site: WebServer, other_site: WebServer
) -> None:
    settings = Settings(
        web_fetch_private_hosts=["127.0.0.1", "localhost"],
        web_fetch_allowed_domains=["127.0.0.1"],
    )
    ok = await tool_turn(tmp_path, settings, "web_fetch", {"url": f"{site.url}/plain"})
    assert "just text" in ok.returned["content"]
    away = f"http://localhost:{other_site.port}/plain"
    turn = await tool_turn(
        tmp_path, settings, "web_fetch", {"url": f"{site.url}/redirect?to={away}"}
    )
    assert "localhost is not in web_fetch_allowed_domains (127.0.0.1)" in turn.returned["display"]
    assert other_site.hits == []
    # Allowing a domain does not allow its private addresses.
    only_allowed = Settings(web_fetch_allowed_domains=["127.0.0.1"])
    refused = await tool_turn(tmp_path, only_allowed, "web_fetch", {"url": f"{site.url}/plain"})
    assert "refused to fetch a loopback address" in refused.returned["display"]
