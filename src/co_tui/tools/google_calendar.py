"""Google Calendar: events in a time range, and a text search, with Meet and event links."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic_ai import ModelRetry, RunContext, ToolReturn

from co_tui.context.deps import CoDeps
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.tools.errors import ToolFailure, handle_tool_error
from co_tui.tools.google_api import google_call
from co_tui.tools.tool_return import tool_return

SERVICE = "Google Calendar"
MAX_RESULTS = 100
MAX_DAYS = 366


def meet_link(event: dict[str, Any]) -> str | None:
    if event.get("hangoutLink"):
        return str(event["hangoutLink"])
    for entry in event.get("conferenceData", {}).get("entryPoints", []):
        if entry.get("entryPointType") == "video" and entry.get("uri"):
            return str(entry["uri"])
    return None


def _when(event: dict[str, Any]) -> str:
    start, end = event.get("start", {}), event.get("end", {})
    if "date" in start:  # all-day
        return f"{start['date']} (all day)"
    try:
        s = datetime.fromisoformat(start["dateTime"])
        e = datetime.fromisoformat(end["dateTime"])
    except (KeyError, ValueError):
        return str(start.get("dateTime", "?"))
    end_text = e.strftime("%H:%M") if e.date() == s.date() else e.strftime("%a %Y-%m-%d %H:%M")
    return f"{s.strftime('%a %Y-%m-%d %H:%M')}–{end_text} {s.strftime('%z')}".rstrip()


def _format_event(index: int, event: dict[str, Any]) -> str:
    lines = [f"{index}. {_when(event)}  {event.get('summary') or '(no title)'}"]
    if event.get("location"):
        lines.append(f"   Where: {event['location']}")
    attendees = [a.get("email", "") for a in event.get("attendees", []) if not a.get("self")]
    if attendees:
        more = f" +{len(attendees) - 5}" if len(attendees) > 5 else ""
        lines.append(f"   With: {', '.join(attendees[:5])}{more}")
    meet = meet_link(event)
    if meet:
        lines.append(f"   Meet: {meet}")
    if event.get("htmlLink"):
        lines.append(f"   Event: {event['htmlLink']}")
    return "\n".join(lines)


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


async def _events(
    ctx: RunContext[CoDeps],
    query: str | None,
    days_back: int,
    days_ahead: int,
    max_results: int,
) -> ToolReturn:
    if days_back < 0 or days_ahead < 0:
        raise ModelRetry("days_back and days_ahead count days from now and must be >= 0.")
    if days_back + days_ahead > MAX_DAYS:
        raise ModelRetry(f"The time range is too long: at most {MAX_DAYS} days in all.")
    if days_back + days_ahead == 0:
        raise ModelRetry("The time range is empty: set days_ahead or days_back above 0.")
    if not 1 <= max_results <= MAX_RESULTS:
        raise ModelRetry(f"max_results must be between 1 and {MAX_RESULTS}.")
    now = ctx.deps.clock()
    time_min, time_max = now - timedelta(days=days_back), now + timedelta(days=days_ahead)

    def request(service: Any) -> dict[str, Any]:
        params: dict[str, Any] = {
            "calendarId": "primary",
            "timeMin": _rfc3339(time_min),
            "timeMax": _rfc3339(time_max),
            "singleEvents": True,
            "orderBy": "startTime",
            "maxResults": max_results,
        }
        if query:
            params["q"] = query
        return service.events().list(**params).execute()

    try:
        result = await google_call(ctx, SERVICE, "calendar", "v3", request)
    except ToolFailure as failure:
        return handle_tool_error(failure, SERVICE)
    events = [e for e in result.get("items", []) if e.get("status") != "cancelled"]
    span = f"{time_min:%Y-%m-%d} to {time_max:%Y-%m-%d}"
    title = f"Events matching {query!r}" if query else "Events"
    has_more = bool(result.get("nextPageToken"))
    if not events:
        return tool_return(ToolDisplay(f"{title}, {span}: none."), count=0, has_more=False)
    lines = [f"{title}, {span}:"] + [_format_event(i, e) for i, e in enumerate(events, 1)]
    if has_more:
        lines.append("More events exist: narrow the range or raise max_results.")
    return tool_return(ToolDisplay("\n".join(lines)), count=len(events), has_more=has_more)


async def list_calendar_events(
    ctx: RunContext[CoDeps], days_ahead: int = 1, days_back: int = 0, max_results: int = 25
) -> ToolReturn:
    """List calendar events from `days_back` days ago to `days_ahead` days from now.

    Args:
        days_ahead: Days from now to include (default 1: the next 24 hours).
        days_back: Days before now to include (default 0).
        max_results: At most this many events (1-100, default 25).
    """
    return await _events(ctx, None, days_back, days_ahead, max_results)


async def search_calendar_events(
    ctx: RunContext[CoDeps],
    query: str,
    days_back: int = 30,
    days_ahead: int = 30,
    max_results: int = 25,
) -> ToolReturn:
    """Search calendar events by text (title, description, location, attendees).

    Args:
        query: Words to look for.
        days_back: Days before now to search (default 30).
        days_ahead: Days after now to search (default 30).
        max_results: At most this many events (1-100, default 25).
    """
    if not query.strip():
        raise ModelRetry("The query is empty: pass words to search for.")
    return await _events(ctx, query, days_back, days_ahead, max_results)


# Registered by build_agent (tools/catalog.py); whether a call asks: policy/tool_specs.py.
TOOLS: list[Any] = [list_calendar_events, search_calendar_events]
