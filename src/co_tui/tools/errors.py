"""Tool error classification shared by the Google and Slack tools.

| kind      | what the tool does                                                   |
| --------- | -------------------------------------------------------------------- |
| TERMINAL  | returns an error `ToolDisplay` (the model reads `"error": true`): it |
|           | picks another way; the call shows as failed                          |
| TRANSIENT | retried here with capped backoff (honouring Retry-After), then a     |
|           | terminal-style result saying the service is busy                     |
| MISUSE    | raises ModelRetry with a hint: the model corrects its arguments      |

A transient failure is not handed back as ModelRetry: the model would only repeat the same
call at once, multiplying the wait; the bounded retries already happened here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NoReturn, TypeVar

from pydantic_ai import ModelRetry, ToolReturn

from co_tui.integrations.retry import RetryPolicy
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.tools.tool_return import tool_return

T = TypeVar("T")


class ToolErrorKind(StrEnum):
    TERMINAL = "terminal"
    TRANSIENT = "transient"
    MISUSE = "misuse"


@dataclass(frozen=True)
class ClassifiedError:
    kind: ToolErrorKind
    message: str
    retry_after: float | None = None
    status: int | None = None


class ToolFailure(Exception):
    """A classified failure that reached the tool after any retries."""

    def __init__(self, error: ClassifiedError, attempts: int = 1) -> None:
        super().__init__(error.message)
        self.error = error
        self.attempts = attempts


def terminal_error(message: str, **fields: Any) -> ToolReturn:
    """The model reads `{"display": message, "error": True, **fields}`; the user sees the
    message as a failed call."""
    return tool_return(ToolDisplay(message, error=True), error=True, **fields)


class NotConfigured(ToolFailure):
    """The service has no credentials. Reported as a terminal result, not ModelRetry (the
    design's choice): retrying cannot fix it, and a model that keeps calling would exhaust
    the tool's retries and fail the whole turn."""


def not_configured(service: str, how: str) -> NoReturn:
    message = (
        f"{service} is not configured, so this tool cannot run. Tell the user how to set it "
        f"up: {how}. Do not call {service} tools again until it is configured."
    )
    raise NotConfigured(ClassifiedError(ToolErrorKind.TERMINAL, message))


def handle_tool_error(failure: ToolFailure, service: str) -> ToolReturn:
    """MISUSE raises ModelRetry; TERMINAL and exhausted TRANSIENT become an error result."""
    err = failure.error
    if isinstance(failure, NotConfigured):
        return terminal_error(err.message, not_configured=True)
    if err.kind is ToolErrorKind.MISUSE:
        raise ModelRetry(f"{service}: {err.message}") from failure
    if err.kind is ToolErrorKind.TRANSIENT:
        tries = "try" if failure.attempts == 1 else "tries"
        return terminal_error(
            f"{service} is unavailable right now ({err.message}; gave up after "
            f"{failure.attempts} {tries}). Tell the user and try again later.",
            retryable=True,
        )
    return terminal_error(f"{service} failed: {err.message}")


async def call_with_retries(
    fn: Callable[[], T],
    classify: Callable[[BaseException], ClassifiedError | None],
    policy: RetryPolicy,
) -> T:
    """Run the blocking `fn` in a worker thread; retry TRANSIENT failures per `policy`.

    Raises ToolFailure for anything classified; unclassified exceptions propagate.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return await asyncio.to_thread(fn)
        except Exception as exc:
            error = classify(exc)
            if error is None:
                raise
            if error.kind is not ToolErrorKind.TRANSIENT or attempt >= policy.attempts:
                raise ToolFailure(error, attempt) from exc
            if error.retry_after is not None and error.retry_after > policy.max_delay:
                message = f"{error.message}; the service asked to wait {error.retry_after:g}s"
                raise ToolFailure(
                    ClassifiedError(error.kind, message, error.retry_after, error.status), attempt
                ) from exc
            await policy.sleep(policy.delay(attempt, error.retry_after))


def parse_retry_after(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(str(value).strip()))
    except ValueError:
        return None  # an HTTP date: rare for these APIs; fall back to exponential backoff


# ---- network ----


def classify_network_error(exc: BaseException) -> ClassifiedError | None:
    if isinstance(exc, TimeoutError):
        return ClassifiedError(ToolErrorKind.TRANSIENT, "the request timed out")
    if isinstance(exc, ConnectionError):
        return ClassifiedError(ToolErrorKind.TRANSIENT, f"cannot connect ({exc})")
    if isinstance(exc, OSError):
        return ClassifiedError(ToolErrorKind.TRANSIENT, f"network error ({exc})")
    return None


# ---- Google ----

_GOOGLE_DISABLED = {"accessNotConfigured", "SERVICE_DISABLED", "serviceDisabled"}
_GOOGLE_RATE = {"rateLimitExceeded", "userRateLimitExceeded", "RATE_LIMIT_EXCEEDED"}
_GOOGLE_SCOPE = {"insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"}
REAUTH_HINT = "run `co-tui auth google` to sign in again"


def _google_reasons(exc: Any) -> tuple[set[str], str]:
    """(the `reason` codes, the API's own message) from an HttpError's body."""
    reasons: set[str] = set()
    message = ""
    try:
        body = json.loads(exc.content.decode("utf-8", "replace"))
        error = body.get("error", {}) if isinstance(body, dict) else {}
        if isinstance(error, dict):
            message = str(error.get("message", ""))
            reasons.update(str(e.get("reason", "")) for e in error.get("errors", []) or [])
            for detail in error.get("details", []) or []:
                if isinstance(detail, dict) and detail.get("reason"):
                    reasons.add(str(detail["reason"]))
            if error.get("status"):
                reasons.add(str(error["status"]))
    except (ValueError, AttributeError):
        pass
    reasons.discard("")
    return reasons, message or str(getattr(exc, "reason", "") or "")


def classify_google_error(exc: BaseException) -> ClassifiedError | None:
    from google.auth.exceptions import RefreshError, TransportError
    from googleapiclient.errors import HttpError

    if isinstance(exc, RefreshError):
        return ClassifiedError(
            ToolErrorKind.TERMINAL, f"the Google sign-in could not be refreshed; {REAUTH_HINT}"
        )
    if isinstance(exc, TransportError):
        return ClassifiedError(ToolErrorKind.TRANSIENT, f"network error ({exc})")
    if not isinstance(exc, HttpError):
        return classify_network_error(exc)
    status = int(exc.status_code or 0)
    reasons, api_message = _google_reasons(exc)
    detail = f"HTTP {status}" + (f": {api_message}" if api_message else "")
    retry_after = parse_retry_after(exc.resp.get("retry-after"))
    if status == 429 or (status == 403 and reasons & _GOOGLE_RATE):
        return ClassifiedError(
            ToolErrorKind.TRANSIENT, f"rate limited ({detail})", retry_after, status
        )
    if status >= 500:
        return ClassifiedError(ToolErrorKind.TRANSIENT, detail, retry_after, status)
    if status == 401:
        return ClassifiedError(
            ToolErrorKind.TERMINAL,
            f"Google rejected the credentials ({detail}); {REAUTH_HINT}",
            status=status,
        )
    if status == 403 and reasons & _GOOGLE_DISABLED:
        return ClassifiedError(
            ToolErrorKind.TERMINAL,
            f"the API is not enabled for this Google Cloud project ({detail}); enable it in "
            "the Google Cloud console",
            status=status,
        )
    if status == 403 and reasons & _GOOGLE_SCOPE:
        return ClassifiedError(
            ToolErrorKind.TERMINAL,
            f"the sign-in lacks a permission this needs ({detail}); {REAUTH_HINT}",
            status=status,
        )
    if status == 403:
        return ClassifiedError(ToolErrorKind.TERMINAL, f"access denied ({detail})", status=status)
    if status == 404:
        return ClassifiedError(
            ToolErrorKind.MISUSE,
            f"not found ({detail}). Check the id: use an id returned by a search or list tool.",
            status=status,
        )
    if status in (400, 412, 416):
        return ClassifiedError(
            ToolErrorKind.MISUSE,
            f"the request was rejected ({detail}); fix the arguments",
            status=status,
        )
    return ClassifiedError(ToolErrorKind.TERMINAL, detail, status=status)


# ---- Slack ----

SLACK_TERMINAL = {
    "invalid_auth",
    "not_authed",
    "account_inactive",
    "token_revoked",
    "token_expired",
    "missing_scope",
    "no_permission",
    "ekm_access_denied",
    "org_login_required",
    "team_access_not_granted",
    "access_denied",
    "not_allowed_token_type",
    "restricted_action",
    "channel_is_archived",
    "is_archived",
}
SLACK_TRANSIENT = {
    "ratelimited",
    "rate_limited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
}
SLACK_HINTS = {
    "channel_not_found": "no such channel: pass a channel id (C…) or name from list_slack_channels",
    "not_in_channel": "the bot is not a member of that channel: pick a channel where "
    "list_slack_channels shows it as a member, or ask the user to invite the bot",
    "thread_not_found": "no such thread: thread_ts must be the ts of a parent message "
    "from get_slack_channel_history",
    "message_not_found": "no such message: use a ts from get_slack_channel_history",
    "invalid_cursor": "the cursor is invalid: use next_cursor from the previous result, "
    "or omit it to start over",
    "user_not_found": "no such user: use an id from list_slack_users",
    "msg_too_long": "the message is too long: shorten the text",
    "no_text": "the message is empty: pass the text to post",
    "invalid_ts_latest": "invalid timestamp",
    "invalid_ts_oldest": "invalid timestamp",
    "invalid_arguments": "invalid arguments",
    "invalid_limit": "invalid limit",
}


def classify_slack_error(exc: BaseException) -> ClassifiedError | None:
    from slack_sdk.errors import SlackApiError, SlackClientError

    if not isinstance(exc, SlackApiError):
        if isinstance(exc, SlackClientError):
            return ClassifiedError(ToolErrorKind.TRANSIENT, f"Slack client error ({exc})")
        return classify_network_error(exc)
    response = exc.response
    status = int(getattr(response, "status_code", 0) or 0)
    data = getattr(response, "data", None)
    code = str(data.get("error", "")) if isinstance(data, dict) else ""
    headers = getattr(response, "headers", {}) or {}
    retry_after = parse_retry_after(
        next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    )
    if status == 429 or code in SLACK_TRANSIENT or status >= 500:
        what = code or f"HTTP {status}"
        return ClassifiedError(ToolErrorKind.TRANSIENT, f"Slack: {what}", retry_after, status)
    if code in SLACK_TERMINAL or status in (401, 403):
        hint = ""
        if code in ("invalid_auth", "not_authed", "token_revoked", "token_expired"):
            hint = "; check SLACK_BOT_TOKEN"
        elif code == "missing_scope":
            needed = data.get("needed", "") if isinstance(data, dict) else ""
            hint = f"; add the bot scope {needed} in the Slack app settings" if needed else ""
        return ClassifiedError(
            ToolErrorKind.TERMINAL, f"Slack error {code or status}{hint}", status=status
        )
    if code in SLACK_HINTS:
        return ClassifiedError(ToolErrorKind.MISUSE, f"{code}: {SLACK_HINTS[code]}", status=status)
    return ClassifiedError(
        ToolErrorKind.MISUSE if code else ToolErrorKind.TERMINAL,
        f"Slack error {code or f'HTTP {status}'}",
        status=status,
    )
