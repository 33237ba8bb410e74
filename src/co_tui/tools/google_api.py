"""What the Google tools share: credentials, service objects, and calls with retries.

Every blocking call runs in a worker thread. A service (and its httplib2 connection, which
is not thread-safe) is built per call; static discovery makes that a local operation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic_ai import RunContext

from co_tui.config.endpoints import GoogleApi
from co_tui.context.deps import CoDeps
from co_tui.integrations.google_auth import (
    SETUP_HINT,
    GoogleAuthError,
    get_cached_google_creds,
    persist_refreshed_token,
)
from co_tui.tools.errors import (
    ClassifiedError,
    ToolErrorKind,
    ToolFailure,
    call_with_retries,
    classify_google_error,
    not_configured,
)

T = TypeVar("T")

HTTP_TIMEOUT_S = 30


def _classify_auth(exc: BaseException) -> ClassifiedError | None:
    if isinstance(exc, GoogleAuthError):
        return ClassifiedError(ToolErrorKind.TERMINAL, f"{exc}; {SETUP_HINT}")
    return classify_google_error(exc)


async def google_credentials(ctx: RunContext[CoDeps], service: str) -> Any:
    """The session's credentials; ModelRetry (with how to configure) when there are none."""
    deps = ctx.deps
    creds = deps.google_session.creds
    if creds is None:
        creds = await call_with_retries(
            lambda: get_cached_google_creds(deps), _classify_auth, deps.retry
        )
    if creds is None:
        not_configured(service, SETUP_HINT)
    return creds


def build_service(deps: CoDeps, creds: Any, name: GoogleApi, version: str) -> Any:
    """The API's client, at the session's endpoint for it (CoDeps.google)."""
    import google_auth_httplib2
    import httplib2
    from googleapiclient.discovery import build

    http = google_auth_httplib2.AuthorizedHttp(creds, http=httplib2.Http(timeout=HTTP_TIMEOUT_S))
    return build(
        name,
        version,
        http=http,
        static_discovery=True,
        cache_discovery=False,
        client_options={"api_endpoint": deps.google.api(name)},
    )


async def google_call(
    ctx: RunContext[CoDeps],
    service: str,
    name: GoogleApi,
    version: str,
    request: Callable[[Any], T],
) -> T:
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

    return await call_with_retries(run, classify_google_error, deps.retry)


__all__ = ["ToolFailure", "build_service", "google_call"]
