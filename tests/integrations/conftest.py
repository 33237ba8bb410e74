"""Local Google and Slack servers, and deps whose tools talk to them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import RunContext
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from co_tui.config.endpoints import GoogleEndpoints, SlackEndpoints
from co_tui.config.settings import Settings
from co_tui.context.deps import CoDeps
from co_tui.integrations.retry import RetryPolicy
from tests.helpers import make_deps
from tests.servers.google_fake import ACCESS_TOKEN, REFRESH_TOKEN, FakeGoogle
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack

FUTURE = "2999-01-01T00:00:00Z"


class RecordingSleep:
    """The backoff's sleep: records each requested delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def google_server() -> Iterator[FakeGoogle]:
    server = FakeGoogle().start()
    yield server
    server.stop()


@pytest.fixture
def slack_server() -> Iterator[FakeSlack]:
    server = FakeSlack().start()
    yield server
    server.stop()


@pytest.fixture
def sleeps() -> RecordingSleep:
    return RecordingSleep()


def authorized_user_info(server: FakeGoogle, token: str = ACCESS_TOKEN) -> dict[str, Any]:
    return {
        "type": "authorized_user",
        "token": token,
        "refresh_token": REFRESH_TOKEN,
        "token_uri": f"{server.url}/token",
        "client_id": "cid.apps.googleusercontent.com",
        "client_secret": "secret",
        "scopes": ["https://www.googleapis.com/auth/drive.readonly"],
        "expiry": FUTURE,
    }


@pytest.fixture
def credentials_file(tmp_path: Path, google_server: FakeGoogle) -> Path:
    path = tmp_path / "authorized_user.json"
    path.write_text(json.dumps(authorized_user_info(google_server)))
    return path


def wire(
    deps: CoDeps, google: FakeGoogle | None, slack: FakeSlack | None, sleep: RecordingSleep
) -> CoDeps:
    if google is not None:
        deps.google = GoogleEndpoints.under(google.url)
    if slack is not None:
        deps.slack = SlackEndpoints(api_base_url=f"{slack.url}/api/")
    deps.retry = RetryPolicy(attempts=3, base_delay=0.01, max_delay=5, sleep=sleep)
    return deps


@pytest.fixture
def deps(
    tmp_path: Path,
    google_server: FakeGoogle,
    slack_server: FakeSlack,
    credentials_file: Path,
    sleeps: RecordingSleep,
) -> CoDeps:
    settings = Settings(google_credentials_path=str(credentials_file), slack_bot_token=BOT_TOKEN)
    return wire(make_deps(tmp_path, settings), google_server, slack_server, sleeps)


def ctx_for(deps: CoDeps) -> RunContext[CoDeps]:
    return RunContext(deps=deps, model=TestModel(), usage=RunUsage())


@pytest.fixture
def ctx(deps: CoDeps) -> RunContext[CoDeps]:
    return ctx_for(deps)
