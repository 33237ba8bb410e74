"""Google credentials: resolved lazily, cached on CoDeps, never prompting inside a tool.

Order: the explicit credentials file (an authorized-user JSON or a service-account key),
then the token `co-tui auth google` stored under the user config dir (refreshed when
expired, and re-saved). A client-secrets file in GOOGLE_CREDENTIALS_PATH is what the
interactive sign-in uses; it is not a credential by itself.

Google libraries are imported inside functions so start-up stays fast.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from co_tui.config.endpoints import GOOGLE_TOKEN_URI, GoogleEndpoints
from co_tui.config.paths import GOOGLE_TOKEN_FILE_NAME, user_config_dir
from co_tui.config.settings import Settings

SCOPES = [
    "https://www.googleapis.com/auth/drive.readonly",
    "https://www.googleapis.com/auth/gmail.readonly",
    "https://www.googleapis.com/auth/gmail.compose",
    "https://www.googleapis.com/auth/calendar.readonly",
]
TOKEN_FILE_NAME = GOOGLE_TOKEN_FILE_NAME

FileKind = Literal["authorized_user", "service_account", "client_secrets", "unknown"]
SETUP_HINT = (
    "run `co-tui auth google` (set GOOGLE_CREDENTIALS_PATH to your OAuth client-secrets JSON "
    "first), or set GOOGLE_CREDENTIALS_PATH to an authorized-user or service-account JSON file"
)


class GoogleAuthError(Exception):
    """Credentials exist but cannot be used; the message says what to do."""


@dataclass
class GoogleSession:
    """The session's Google sign-in (`CoDeps.google_session`), resolved on first use."""

    creds: Any | None = None
    # Where `creds` came from: only a stored token ("token") is re-saved when refreshed.
    source: Literal["file", "token"] | None = None
    saved_token: str | None = None  # the access token last written to the token file


def token_path() -> Path:
    return user_config_dir() / TOKEN_FILE_NAME


def file_kind(info: dict[str, Any]) -> FileKind:
    if info.get("type") == "service_account":
        return "service_account"
    if info.get("type") == "authorized_user" or "refresh_token" in info:
        return "authorized_user"
    if "installed" in info or "web" in info:
        return "client_secrets"
    return "unknown"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GoogleAuthError(f"cannot read {path} ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError):
        raise GoogleAuthError(f"{path} is not a JSON credentials file") from None
    if not isinstance(data, dict):
        raise GoogleAuthError(f"{path} is not a JSON credentials file")
    return data


def save_token(creds: Any, path: Path | None = None) -> Path:
    """Write authorized-user credentials readable by the owner only (0600), atomically."""
    path = path or token_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(creds.to_json())
    os.chmod(tmp, 0o600)  # an older tmp file may have had a wider mode
    os.replace(tmp, path)
    return path


def _refresh_request() -> Any:
    from google.auth.transport.requests import Request

    return Request()


def _load_authorized_user(info: dict[str, Any], token_uri: str) -> Any:
    from google.oauth2.credentials import Credentials

    try:
        creds = Credentials.from_authorized_user_info(info)
    except ValueError as exc:
        raise GoogleAuthError(f"the authorized-user credentials are incomplete ({exc})") from None
    # The library pins Google's token endpoint whatever the file says; a configured other
    # one (CoDeps.google: a proxy, a local server) replaces it.
    if token_uri == creds.token_uri:
        return creds
    copy = creds.with_token_uri(token_uri)
    copy.expiry = creds.expiry  # the library's copy drops it
    return copy


def load_credentials(
    credentials_path: str | None,
    *,
    stored_token: Path | None = None,
    token_uri: str = GOOGLE_TOKEN_URI,
) -> tuple[Any, Literal["file", "token"]] | None:
    """Resolve credentials without any prompt: (credentials, source) or None.

    Blocking (a stored token may be refreshed over the network): call it from a thread.
    Raises GoogleAuthError when configured credentials cannot be used, and
    google.auth.exceptions.RefreshError when a refresh is refused.
    """
    if credentials_path:
        path = Path(credentials_path).expanduser()
        if not path.is_file():
            raise GoogleAuthError(f"GOOGLE_CREDENTIALS_PATH points at {path}, which does not exist")
        info = _read_json(path)
        kind = file_kind(info)
        if kind == "service_account":
            from google.oauth2 import service_account

            return service_account.Credentials.from_service_account_info(
                info, scopes=SCOPES
            ), "file"
        if kind == "authorized_user":
            return _load_authorized_user(info, token_uri), "file"
        if kind == "unknown":
            raise GoogleAuthError(
                f"{path} is neither an authorized-user, a service-account nor a client-secrets file"
            )
    stored = stored_token or token_path()
    if not stored.is_file():
        return None
    creds = _load_authorized_user(_read_json(stored), token_uri)
    if not creds.valid and creds.refresh_token:
        creds.refresh(_refresh_request())
        save_token(creds, stored)
    return creds, "token"


class GoogleAccess(Protocol):
    """What resolving the session's credentials reads of it (CoDeps has each of these)."""

    @property
    def google_session(self) -> GoogleSession: ...

    @property
    def google_credentials_path(self) -> str | None: ...

    @property
    def google(self) -> GoogleEndpoints: ...


def get_cached_google_creds(deps: GoogleAccess) -> Any | None:
    """The session's credentials, resolved on first use. Blocking: run in a thread.

    A miss is not cached, so signing in with `co-tui auth google` works mid-session.
    """
    session = deps.google_session
    if session.creds is not None:
        return session.creds
    found = load_credentials(deps.google_credentials_path, token_uri=deps.google.token_uri)
    if found is None:
        return None
    creds, source = found
    session.creds, session.source = creds, source
    session.saved_token = getattr(creds, "token", None)
    return creds


def persist_refreshed_token(deps: GoogleAccess) -> None:
    """A 401 refreshes the token inside the client library; keep the stored copy current."""
    session = deps.google_session
    if session.creds is None or session.source != "token":
        return
    token = getattr(session.creds, "token", None)
    if token and token != session.saved_token:
        with contextlib.suppress(OSError):
            save_token(session.creds)
            session.saved_token = token


def run_oauth_flow(
    client_secrets: Path,
    *,
    token_file: Path | None = None,
    open_browser: bool = True,
    port: int = 0,
    scopes: list[str] | None = None,
) -> Path:
    """The interactive installed-app sign-in (`co-tui auth google`). Saves the token 0600."""
    from google_auth_oauthlib.flow import InstalledAppFlow

    info = _read_json(client_secrets)
    if file_kind(info) != "client_secrets":
        raise GoogleAuthError(
            f"{client_secrets} is not an OAuth client-secrets file (download one for a "
            "'Desktop app' client from the Google Cloud console)"
        )
    flow = InstalledAppFlow.from_client_config(info, scopes=scopes or SCOPES)
    creds = flow.run_local_server(
        host="127.0.0.1",
        port=port,
        open_browser=open_browser,
        authorization_prompt_message="Open this address to sign in to Google:\n{url}",
        success_message="co-tui is signed in to Google. You can close this tab.",
        timeout_seconds=300,
    )
    return save_token(creds, token_file)


def integration_state(settings: Settings) -> tuple[str, Literal["ok", "error", "off"]]:
    """For /status: reads local files only, never calls Google."""
    return credentials_state(settings.google_credentials_path)


def credentials_state(path: str | None) -> tuple[str, Literal["ok", "error", "off"]]:
    """What `google_credentials_path` and the stored token make of the integration: "off"
    when neither lets a tool sign in. Reads local files only, never calls Google."""
    stored = token_path()
    try:
        if path:
            info = _read_json(Path(path).expanduser())
            kind = file_kind(info)
            if kind in ("service_account", "authorized_user"):
                return f"configured ({kind.replace('_', ' ')} file)", "ok"
            if kind == "unknown":
                return f"failing: {path} is not a credentials file", "error"
        if stored.is_file():
            info = _read_json(stored)
            if file_kind(info) != "authorized_user":
                return f"failing: {stored} is not a usable token; run co-tui auth google", "error"
            return "configured (signed in)", "ok"
    except GoogleAuthError as exc:
        return f"failing: {exc}", "error"
    if path:
        return "not configured (client secrets set; run co-tui auth google)", "off"
    return "not configured (co-tui auth google)", "off"


def sign_in_command(
    settings: Settings, client_secrets: Path | None, *, open_browser: bool = True, port: int = 0
) -> int:
    """`co-tui auth google`: exit status 0 when a token was stored."""
    import sys

    from co_tui.safety.visible import visible

    source = client_secrets or (
        Path(settings.google_credentials_path).expanduser()
        if settings.google_credentials_path
        else None
    )
    if source is None:
        print(
            "co-tui: pass --client-secrets FILE (an OAuth client of type 'Desktop app' from the "
            "Google Cloud console) or set GOOGLE_CREDENTIALS_PATH to it",
            file=sys.stderr,
        )
        return 2
    try:
        saved = run_oauth_flow(source, open_browser=open_browser, port=port)
    except GoogleAuthError as exc:
        print(f"co-tui: {visible(str(exc), keep='')}", file=sys.stderr)
        return 1
    except Exception as exc:  # the flow's own errors: denied consent, timeout, token endpoint
        why = visible(f"{type(exc).__name__}: {exc}", keep="")  # a server's words
        print(f"co-tui: Google sign-in failed: {why}", file=sys.stderr)
        return 1
    print(f"Signed in to Google. Token saved to {saved} (readable by you only).")
    return 0
