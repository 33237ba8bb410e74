"""WebConfig: the web tools' settings, copied into CoDeps once per session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from co_tui.config.settings import Settings

Policy = Literal["allow", "ask", "deny"]

DEFAULT_BRAVE_BASE_URL = "https://api.search.brave.com/res/v1"


@dataclass
class WebConfig:
    search_policy: Policy = "allow"
    fetch_policy: Policy = "allow"
    brave_base_url: str = DEFAULT_BRAVE_BASE_URL
    allowed_domains: list[str] = field(default_factory=list)  # empty: every domain
    blocked_domains: list[str] = field(default_factory=list)
    private_hosts: list[str] = field(default_factory=list)  # may resolve to non-public addresses
    timeout: float = 15.0  # seconds per request
    max_bytes: int = 2_000_000  # bytes read from one response
    max_chars: int = 20_000  # characters of text handed to the model
    max_redirects: int = 5

    @classmethod
    def from_settings(cls, settings: Settings) -> WebConfig:
        return cls(
            search_policy=settings.web_policy.search,
            fetch_policy=settings.web_policy.fetch,
            brave_base_url=settings.brave_search_base_url,
            allowed_domains=list(settings.web_fetch_allowed_domains),
            blocked_domains=list(settings.web_fetch_blocked_domains),
            private_hosts=list(settings.web_fetch_private_hosts),
        )
