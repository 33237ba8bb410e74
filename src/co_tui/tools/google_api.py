"""What the Google tools share: credentials, service objects, and calls with retries.

Every blocking call runs in a worker thread. A service (and its httplib2 connection, which
is not thread-safe) is built per call; static discovery makes that a local operation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic_ai import RunContext

from co_tui.deps import CoDeps
from co_tui.google_auth import (
    SETUP_HINT,
    GoogleAuthError,
    get_cached_google_creds,
    persist_refreshed_token,
)
from co_tui.tools._errors import (
    ClassifiedError,
    ToolErrorKind,
    ToolFailure,
    call_with_retries,
    classify_google_error,
    not_configured,
    retry_policy,
)

T = TypeVar("T")

API_BASE_URL_KEY = "google_api_base_url"  # CoDeps.extra: e.g. a local test server
HTTP_TIMEOUT_S = 30

# Paths under the API base, as Google's own discovery documents lay them out.
_ENDPOINT_PATHS = {"drive": "drive/v3/", "gmail": "", "calendar": "calendar/v3/"}


def _classify_auth(exc: BaseException) -> ClassifiedError | None:
    if isinstance(exc, GoogleAuthError):
        return ClassifiedError(ToolErrorKind.TERMINAL, f"{exc}; {SETUP_HINT}")
    return classify_google_error(exc)


async def google_credentials(ctx: RunContext[CoDeps], service: str) -> Any:
    """The session's credentials; ModelRetry (with how to configure) when there are none."""
    deps = ctx.deps
    creds = deps.google_creds
    if creds is None:
        creds = await call_with_retries(
            lambda: get_cached_google_creds(deps), _classify_auth, retry_policy(deps.extra)
        )
    if creds is None:
        not_configured(f"Google {service}", SETUP_HINT)
    return creds


def build_service(deps: CoDeps, creds: Any, name: str, version: str) -> Any:
    import google_auth_httplib2
    import httplib2
    from googleapiclient.discovery import build

    http = google_auth_httplib2.AuthorizedHttp(creds, http=httplib2.Http(timeout=HTTP_TIMEOUT_S))
    options: dict[str, Any] = {}
    base = deps.extra.get(API_BASE_URL_KEY)
    if base:
        options["api_endpoint"] = f"{str(base).rstrip('/')}/{_ENDPOINT_PATHS[name]}"
    return build(
        name, version, http=http, static_discovery=True, cache_discovery=False,
        client_options=options or None,
    )  # fmt: skip


async def google_call(
    ctx: RunContext[CoDeps], service: str, name: str, version: str,
    request: Callable[[Any], T],
) -> T:  # fmt: skip
    """Build the service and run `request(service)` in a thread, retrying transient errors.

    Raises ToolFailure (classified) for the caller to hand to handle_tool_error.
    """
    deps = ctx.deps
    creds = await google_credentials(ctx, service)

    def run() -> T:
        try:
            return request(build_service(deps, creds, name, version))
        finally:
            persist_refreshed_token(deps)

    return await call_with_retries(run, classify_google_error, retry_policy(deps.extra))


__all__ = ["API_BASE_URL_KEY", "ToolFailure", "build_service", "google_call"]
