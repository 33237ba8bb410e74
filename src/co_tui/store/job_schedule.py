"""When a job runs: what the user wrote, read as a schedule in their time zone.

Recurring schedules are cron expressions (croniter does the calendar and time-zone
arithmetic, daylight-saving changes included); a few phrases are spelled as one:
"every day at 7:30", "every weekday at 8am", "every monday, thursday at 18:00", "every 15
minutes", "every 2 hours". Anything else is one time, read by dateparser relative to now
("in 20 minutes", "tomorrow 9am", "2026-12-24 18:00"), and must lie in the future.

A run's slot is its fire time as the wall clock shows it in the job's time zone, without an
offset: on the night the clocks go back, 02:30 comes twice and the job still runs once.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_DAY_SETS = {"day": "*", "weekday": "1-5", "weekend": "0,6"}
_EVERY_AT = re.compile(r"every\s+(?P<days>[a-z ,]+?)s?\s+at\s+(?P<time>.+)", re.IGNORECASE)
_EVERY_N = re.compile(r"every\s+(?P<n>\d+)?\s*(?P<unit>minute|hour)s?", re.IGNORECASE)
_TIME = re.compile(r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>am|pm)?", re.IGNORECASE)

Kind = Literal["cron", "once"]


class ScheduleError(ValueError):
    """What the user wrote is not a schedule; the message says what was wrong."""


@dataclass(frozen=True)
class Schedule:
    text: str  # as the user wrote it
    timezone: str  # IANA name
    kind: Kind
    cron: str = ""  # kind "cron": five fields
    at: datetime | None = None  # kind "once": the moment, aware

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def next_fire(self, after: datetime) -> datetime | None:
        """The first fire time strictly after `after` (aware), in UTC (aware times in one
        zone compare by the wall clock, blind to the hour the clocks go back); None when a
        one-time job has fired."""
        if self.kind == "once":
            assert self.at is not None
            return self.at.astimezone(UTC) if self.at > after else None
        from croniter import croniter

        fire: datetime = croniter(self.cron, after.astimezone(self.zone)).get_next(datetime)
        return fire.astimezone(UTC)

    def to_json(self) -> dict[str, Any]:
        at = self.at.isoformat() if self.at is not None else None
        return {
            "text": self.text,
            "timezone": self.timezone,
            "kind": self.kind,
            "cron": self.cron,
            "at": at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Schedule:
        at = datetime.fromisoformat(data["at"]) if data.get("at") else None
        return cls(data["text"], data["timezone"], data["kind"], data.get("cron", ""), at)


def slot_of(fire: datetime, zone: ZoneInfo) -> str:
    """The slot a fire time is: the wall clock's reading in the job's zone, no offset."""
    return fire.astimezone(zone).replace(tzinfo=None).isoformat(timespec="minutes")


def local_zone_name() -> str:
    """The user's IANA time zone (tzlocal reads the system's; UTC when it cannot say)."""
    try:
        from tzlocal import get_localzone_name

        return get_localzone_name() or "UTC"
    except Exception:  # no zone configured (containers): UTC, said by `co-tui jobs list`
        return "UTC"


def parse_schedule(text: str, now: datetime, timezone: str | None = None) -> Schedule:
    """`text` as a schedule in `timezone` (default: the user's). Raises ScheduleError."""
    words = " ".join(text.split())
    if not words:
        raise ScheduleError("the schedule is empty")
    name = timezone or local_zone_name()
    try:
        zone = ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"unknown time zone {name!r} (an IANA name: Europe/Berlin)") from None
    cron = _as_cron(words)
    if cron is not None:
        from croniter import croniter

        if not croniter.is_valid(cron):
            raise ScheduleError(f"{words!r} is not a valid cron expression")
        return Schedule(words, name, "cron", cron=cron)
    at = _one_time(words, now.astimezone(zone), name)
    return Schedule(words, name, "once", at=at)


def _as_cron(words: str) -> str | None:
    """Five cron fields for a recurring `words`; None when `words` is not recurring."""
    fields = words.split(" ")
    # minute and hour are numbers or *; day, month and weekday may be names (mon-fri)
    if len(fields) == 5 and all(re.fullmatch(r"[\d*/,\-]+", f) for f in fields[:2]):
        return words
    every_at = _EVERY_AT.fullmatch(words)
    if every_at:
        hour, minute = _clock(every_at["time"])
        return f"{minute} {hour} * * {_days(every_at['days'])}"
    every_n = _EVERY_N.fullmatch(words)
    if every_n:
        n = int(every_n["n"] or 1)
        if every_n["unit"].lower() == "minute":
            if n < 1 or 60 % n:
                raise ScheduleError("every N minutes needs N to divide 60 (1, 5, 15, 30…)")
            return f"*/{n} * * * *"
        if n < 1 or 24 % n:
            raise ScheduleError("every N hours needs N to divide 24 (1, 2, 6, 12…)")
        return f"0 */{n} * * *"
    if words.lower().startswith("every "):
        raise ScheduleError(
            f"cannot read {words!r}: try 'every weekday at 8:00', 'every 15 minutes' or cron"
        )
    return None


def _days(text: str) -> str:
    names = [n.strip().lower().removesuffix("s") for n in re.split(r",|\band\b", text)]
    if len(names) == 1 and names[0] in _DAY_SETS:
        return _DAY_SETS[names[0]]
    numbers = []
    for name in names:
        match = [i for i, day in enumerate(DAYS) if day.startswith(name) and len(name) >= 3]
        if len(match) != 1:
            raise ScheduleError(f"{name!r} is not a day (monday… sunday, day, weekday, weekend)")
        numbers.append(str(match[0]))
    return ",".join(numbers)


def _clock(text: str) -> tuple[int, int]:
    match = _TIME.fullmatch(text.strip())
    if not match:
        raise ScheduleError(f"{text!r} is not a time of day (8:00, 7am, 18:30)")
    hour, minute = int(match["hour"]), int(match["minute"] or 0)
    half = (match["half"] or "").lower()
    if half:
        if not 1 <= hour <= 12:
            raise ScheduleError(f"{text!r}: with am/pm the hour is 1 to 12")
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        raise ScheduleError(f"{text!r} is not a time of day")
    return hour, minute


def _languages() -> list[str]:
    """English and the language of the user's locale (LC_ALL, LC_TIME or LANG, as POSIX
    reads them: "de_DE.UTF-8" is German): trying every language dateparser knows takes
    seconds for text that is no time at all."""
    names = (os.environ.get(name) for name in ("LC_ALL", "LC_TIME", "LANG"))
    setting = next((name for name in names if name), "")
    code = setting.split(".")[0].split("_")[0].lower()
    return ["en"] if code in ("", "c", "posix", "en") else ["en", code]


def _one_time(words: str, now: datetime, zone_name: str) -> datetime:
    import dateparser

    settings: Any = {
        "RELATIVE_BASE": now.replace(tzinfo=None),
        "PREFER_DATES_FROM": "future",
        "TIMEZONE": zone_name,
        "RETURN_AS_TIMEZONE_AWARE": True,
    }
    try:
        found = dateparser.parse(words, languages=_languages(), settings=settings)
    except ValueError:  # the locale's language is not one dateparser knows
        found = dateparser.parse(words, languages=["en"], settings=settings)
    if found is None:
        raise ScheduleError(
            f"cannot read {words!r} as a time: try 'in 20 minutes', 'tomorrow 9am', "
            "'every weekday at 8:00' or a cron expression"
        )
    if found <= now - timedelta(seconds=1):
        raise ScheduleError(f"{words!r} is {found:%Y-%m-%d %H:%M}, which has passed")
    return found
