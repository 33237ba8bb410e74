"""`co-tui auth google`: the installed-app OAuth flow against a local token endpoint."""

from __future__ import annotations

import json
import re
import socket
import stat
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from co_tui.config.settings import Settings
from co_tui.integrations.google_auth import sign_in_command, token_path
from tests.servers.google_fake import FakeGoogle


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_sign_in_stores_the_token_owner_only(
    tmp_path: Path,
    google_server: FakeGoogle,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")  # the local token endpoint is http
    secrets = tmp_path / "client.json"
    secrets.write_text(
        json.dumps(
            {
                "installed": {
                    "client_id": "cid.apps.googleusercontent.com",
                    "client_secret": "secret",
                    "auth_uri": f"{google_server.url}/auth",
                    "token_uri": f"{google_server.url}/token",
                    "redirect_uris": ["http://localhost"],
                }
            }
        )
    )
    port = free_port()
    codes: list[int] = []
    worker = threading.Thread(
        target=lambda: codes.append(
            sign_in_command(
                Settings(google_credentials_path=str(secrets)), None, open_browser=False, port=port
            )
        )
    )
    worker.start()
    printed = ""
    deadline = time.monotonic() + 10
    while "state=" not in printed and time.monotonic() < deadline:
        printed += capsys.readouterr().out
        time.sleep(0.02)
    auth_url = re.search(r"(http://\S+/auth\?\S+)", printed)
    assert auth_url, printed
    state = parse_qs(urlsplit(auth_url.group(1)).query)["state"][0]
    # The browser's redirect after consent:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/?state={state}&code=good-code") as r:
        assert r.status == 200
    worker.join(10)
    assert codes == [0]
    saved = json.loads(token_path().read_text())
    assert saved["token"] == "issued-1" and saved["refresh_token"] == "good-refresh"
    assert stat.S_IMODE(token_path().stat().st_mode) == 0o600
    (exchange,) = google_server.requests_to("/token")
    assert exchange.form()["code"] == "good-code"


def test_sign_in_without_client_secrets_explains(capsys: pytest.CaptureFixture[str]) -> None:
    assert sign_in_command(Settings(), None) == 2
    assert "--client-secrets" in capsys.readouterr().err


def test_sign_in_rejects_a_non_client_file(tmp_path: Path) -> None:
    other = tmp_path / "sa.json"
    other.write_text(json.dumps({"type": "service_account"}))
    assert sign_in_command(Settings(), other) == 1
