"""What to do when the provider fails: reflect, back off and retry, or abort."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelNotFoundError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelRequestTimeout,
    ModelTimeoutError,
)

DEFAULT_RETRY_AFTER_S = 3.0
BACKOFF_BASE_S = 2.0
MAX_DELAY_S = 30.0


class ProviderErrorAction(Enum):
    REFLECT = "reflect"  # 400: tell the model what was wrong and let it correct itself
    BACKOFF_RETRY = "backoff_retry"  # 429, 5xx, network
    ABORT = "abort"  # 401, 403, 404 and anything we cannot fix by retrying
    CONTEXT_OVERFLOW = "context_overflow"  # the conversation no longer fits


@dataclass(frozen=True)
class ProviderErrorVerdict:
    action: ProviderErrorAction
    message: str
    delay_s: float = 0.0


def status_code_of(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def _body_text(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        msg = body.get("message") or body.get("error") or body
        return str(msg.get("message", msg) if isinstance(msg, dict) else msg)
    if body:
        return str(body)
    return str(exc)


def backoff_delay(attempt: int, retry_after: float | None, status: int | None) -> float:
    """attempt is 0 for the first retry. Retry-After wins for 429 (default 3 s)."""
    if status == 429:
        base = retry_after if retry_after is not None else DEFAULT_RETRY_AFTER_S
        delay = base if attempt == 0 else base * (2**attempt)
    else:
        delay = BACKOFF_BASE_S * (2**attempt)
    return min(delay, MAX_DELAY_S)


def classify_provider_error(exc: BaseException, attempt: int = 0) -> ProviderErrorVerdict:
    status = status_code_of(exc)
    detail = _body_text(exc)
    model = getattr(exc, "model_name", "") or "the model"
    if isinstance(exc, ModelContextWindowExceededError):
        return ProviderErrorVerdict(
            ProviderErrorAction.CONTEXT_OVERFLOW,
            f"the conversation is too long for {model}: {detail}",
        )
    if isinstance(exc, ModelAuthenticationError) or status in (401, 403):
        return ProviderErrorVerdict(
            ProviderErrorAction.ABORT,
            f"{model} refused the credentials (HTTP {status or 401}): {detail}. "
            "Check the API key in your settings or environment.",
        )
    if isinstance(exc, ModelNotFoundError) or status == 404:
        return ProviderErrorVerdict(
            ProviderErrorAction.ABORT,
            f"model {model} was not found (HTTP 404): {detail}. Check the model name.",
        )
    if isinstance(exc, ModelRateLimitError) or status == 429:
        retry_after = getattr(exc, "retry_after", None)
        delay = backoff_delay(attempt, retry_after, 429)
        return ProviderErrorVerdict(
            ProviderErrorAction.BACKOFF_RETRY, f"rate limited by {model}: {detail}", delay
        )
    if (status is not None and 400 <= status < 500) or isinstance(exc, ModelRequestRejectedError):
        if status in (400, 422) or status is None:
            return ProviderErrorVerdict(
                ProviderErrorAction.REFLECT, f"{model} rejected the request: {detail}"
            )
        return ProviderErrorVerdict(
            ProviderErrorAction.ABORT, f"{model} refused the request (HTTP {status}): {detail}"
        )
    if isinstance(exc, ModelAPIError):
        # 5xx, overload, connection refused, timeouts, cut or garbled streams.
        return ProviderErrorVerdict(
            ProviderErrorAction.BACKOFF_RETRY,
            f"{model} failed ({_network_failure(exc, status)}): {detail}",
            backoff_delay(attempt, None, status),
        )
    return ProviderErrorVerdict(ProviderErrorAction.ABORT, f"{type(exc).__name__}: {exc}")


def _network_failure(exc: ModelAPIError, status: int | None) -> str:
    if status:
        return f"HTTP {status}"
    if isinstance(exc, ModelTimeoutError | ModelRequestTimeout):
        return "no answer in time: see provider_idle_timeout and provider_connect_timeout"
    if isinstance(exc, ModelConnectionError):
        if exc.phase == "read":
            return "the connection broke while the answer was arriving"
        return "cannot reach the provider"
    if type(exc) is ModelAPIError:
        # pydantic-ai's own verdict on what arrived: a stream that ended without a finish
        # reason (llm/resolved.py STREAMS_MUST_FINISH), a body that is not JSON.
        return "the answer arrived incomplete or unreadable"
    return "the provider failed"
