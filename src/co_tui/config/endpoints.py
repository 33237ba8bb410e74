"""Where the Google and Slack tools connect: configuration, defaulting to the real services.

Every URL a tool calls comes from here (through `CoDeps.google` and `CoDeps.slack`), so a
server laid out like the real one (a proxy, the local servers in tests/servers/) is reached
by pointing these at it; nothing in the tools changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GoogleApi = Literal["drive", "gmail", "calendar"]

GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
SLACK_API_BASE_URL = "https://slack.com/api/"


@dataclass(frozen=True)
class GoogleEndpoints:
    """The base URL of each Google API the tools use (as Google's discovery documents give
    them) and the OAuth endpoint a stored sign-in is refreshed at."""

    drive: str = "https://www.googleapis.com/drive/v3/"
    gmail: str = "https://gmail.googleapis.com/"
    calendar: str = "https://www.googleapis.com/calendar/v3/"
    token_uri: str = GOOGLE_TOKEN_URI

    @classmethod
    def under(cls, base_url: str) -> GoogleEndpoints:
        """Every API and the token endpoint under one base URL, with Google's own paths."""
        base = base_url.rstrip("/")
        return cls(
            drive=f"{base}/drive/v3/",
            gmail=f"{base}/",
            calendar=f"{base}/calendar/v3/",
            token_uri=f"{base}/token",
        )

    def api(self, name: GoogleApi) -> str:
        return {"drive": self.drive, "gmail": self.gmail, "calendar": self.calendar}[name]


@dataclass(frozen=True)
class SlackEndpoints:
    """The Slack Web API's base URL (ends with a slash: method names are appended)."""

    api_base_url: str = SLACK_API_BASE_URL
