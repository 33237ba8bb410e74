"""Credential resolution, token refresh and persistence, and the Google error classes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from pydantic_ai import RunContext

from co_tui.config.endpoints import GoogleEndpoints
from co_tui.config.settings import Settings
from co_tui.context.deps import CoDeps
from co_tui.integrations.google_auth import integration_state, token_path
from co_tui.session.health import integration_rows
from co_tui.tools.google_calendar import list_calendar_events
from co_tui.tools.google_drive import search_drive
from co_tui.tools.google_gmail import list_emails
from tests.helpers import make_deps, model_view
from tests.integrations.conftest import RecordingSleep, authorized_user_info, ctx_for, wire
from tests.servers.google_fake import (
    API_DISABLED,
    BACKEND_ERROR,
    RATE_LIMITED,
    FakeGoogle,
)


def stored_token_deps(
    tmp_path: Path, server: FakeGoogle, sleeps: RecordingSleep, **overrides: str
) -> CoDeps:
    path = token_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(authorized_user_info(server) | overrides))
    return wire(make_deps(tmp_path, Settings()), server, None, sleeps)


async def test_401_refreshes_against_token_uri_and_resaves_the_token(
    tmp_path: Path, google_server: FakeGoogle, sleeps: RecordingSleep
) -> None:
    deps = stored_token_deps(tmp_path, google_server, sleeps, token="stale-token")
    result = model_view(await list_emails(ctx_for(deps)))
    assert result["count"] == 3
    auths = [r.headers.get("authorization") for r in google_server.received if r.path != "/token"]
    assert auths[0] == "Bearer stale-token" and auths[1] == "Bearer refreshed-1"
    (refresh,) = google_server.requests_to("/token")
    assert refresh.form()["refresh_token"] == "good-refresh"
    saved = json.loads(token_path().read_text())
    assert saved["token"] == "refreshed-1"
    assert stat.S_IMODE(token_path().stat().st_mode) == 0o600
    assert sleeps.delays == []


async def test_expired_stored_token_is_refreshed_before_the_first_call(
    tmp_path: Path, google_server: FakeGoogle, sleeps: RecordingSleep
) -> None:
    deps = stored_token_deps(
        tmp_path, google_server, sleeps, token="old", expiry="2001-01-01T00:00:00Z"
    )
    result = model_view(await search_drive(ctx_for(deps), "plan"))
    assert result["count"] == 3
    assert google_server.received[0].path == "/token"
    assert json.loads(token_path().read_text())["token"] == "refreshed-1"


async def test_refused_refresh_is_terminal_with_sign_in_hint(
    tmp_path: Path, google_server: FakeGoogle, sleeps: RecordingSleep
) -> None:
    deps = stored_token_deps(
        tmp_path, google_server, sleeps, token="stale-token", refresh_token="revoked"
    )
    result = model_view(await list_emails(ctx_for(deps)))
    assert result["error"] is True
    assert "co-tui auth google" in result["display"]
    assert sleeps.delays == []


async def test_api_disabled_403_is_terminal(
    ctx: RunContext[CoDeps], google_server: FakeGoogle, sleeps: RecordingSleep
) -> None:
    google_server.fail("/gmail/", 403, API_DISABLED)
    result = model_view(await list_emails(ctx))
    assert result["error"] is True and "not enabled" in result["display"]
    assert len(google_server.requests_to("/gmail/")) == 1 and sleeps.delays == []


async def test_429_waits_for_retry_after_then_succeeds(
    ctx: RunContext[CoDeps], google_server: FakeGoogle, sleeps: RecordingSleep
) -> None:
    google_server.fail("/drive/", 429, RATE_LIMITED, {"Retry-After": "3"})
    result = model_view(await search_drive(ctx, "plan"))
    assert result["count"] == 3
    assert sleeps.delays == [3.0]
    assert len(google_server.requests_to("/drive/")) == 2


async def test_403_rate_limit_reason_is_transient(
    ctx: RunContext[CoDeps], google_server: FakeGoogle, sleeps: RecordingSleep
) -> None:
    body = {
        "error": {
            "code": 403,
            "message": "User Rate Limit Exceeded",
            "errors": [{"reason": "userRateLimitExceeded"}],
        }
    }
    google_server.fail("/calendar/", 403, body)
    result = model_view(await list_calendar_events(ctx))
    assert "error" not in result and len(sleeps.delays) == 1


async def test_500_is_retried_a_bounded_number_of_times_then_reported(
    ctx: RunContext[CoDeps], google_server: FakeGoogle, sleeps: RecordingSleep
) -> None:
    google_server.fail("/calendar/", 500, BACKEND_ERROR, times=10)
    result = model_view(await list_calendar_events(ctx))
    assert result["error"] is True and result["retryable"] is True
    assert "HTTP 500" in result["display"] and "gave up after 3 tries" in result["display"]
    assert len(google_server.requests_to("/calendar/")) == 3
    assert sleeps.delays[0] < sleeps.delays[1] <= 5


async def test_connection_refused_is_transient(
    tmp_path: Path, credentials_file: Path, sleeps: RecordingSleep
) -> None:
    dead = FakeGoogle()
    url = dead.url
    dead._server.server_close()  # nothing listens on that port any more
    deps = make_deps(tmp_path, Settings(google_credentials_path=str(credentials_file)))
    wire(deps, None, None, sleeps).google = GoogleEndpoints.under(url)
    result = model_view(await search_drive(ctx_for(deps), "plan"))
    assert result["error"] is True and result["retryable"] is True
    assert len(sleeps.delays) == 2


async def test_not_configured_is_an_error_result_naming_the_fix(tmp_path: Path) -> None:
    deps = make_deps(tmp_path, Settings())
    result = model_view(await search_drive(ctx_for(deps), "plan"))
    assert result["error"] is True and result["not_configured"] is True
    assert "co-tui auth google" in result["display"]
    assert result["display"].startswith("Google Drive is not configured"), result["display"]


async def test_missing_credentials_file_is_terminal(tmp_path: Path) -> None:
    deps = make_deps(tmp_path, Settings(google_credentials_path=str(tmp_path / "none.json")))
    result = model_view(await list_emails(ctx_for(deps)))
    assert result["error"] is True and "does not exist" in result["display"]


def test_status_rows_never_call_out(tmp_path: Path, credentials_file: Path) -> None:
    def rows(settings: Settings) -> dict[str, tuple[str, str]]:
        return {r.name: (r.value, r.state) for r in integration_rows(settings)}

    off = rows(Settings())
    assert off["Google"] == ("not configured (co-tui auth google)", "off")
    assert off["Slack"] == ("not configured (SLACK_BOT_TOKEN)", "off")
    on = rows(Settings(google_credentials_path=str(credentials_file), slack_bot_token="xoxb-1"))
    assert on["Google"][1] == "ok" and on["Slack"] == ("configured (bot token)", "ok")
    bad_file = tmp_path / "bad.json"
    bad_file.write_text("{not json")
    failing = rows(Settings(google_credentials_path=str(bad_file), slack_bot_token="oops"))
    assert failing["Google"][1] == "error" and failing["Google"][0].startswith("failing")
    assert failing["Slack"][1] == "error"
    missing = integration_state(Settings(google_credentials_path=str(tmp_path / "gone.json")))
    assert missing[1] == "error"
    secrets = tmp_path / "client.json"
    secrets.write_text(json.dumps({"installed": {"client_id": "x", "client_secret": "y"}}))
    assert integration_state(Settings(google_credentials_path=str(secrets)))[1] == "off"
    token_path().parent.mkdir(parents=True, exist_ok=True)
    token_path().write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "refresh_token": "r",
                "client_id": "c",
                "client_secret": "s",
            }
        )
    )
    assert integration_state(Settings(google_credentials_path=str(secrets))) == (
        "configured (signed in)",
        "ok",
    )
