"""What a user writes as a job's schedule, and when it fires: phrases, cron, one time, time
zones and the nights the clocks change. croniter and dateparser do the arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from co_tui.store.job_schedule import ScheduleError, parse_schedule, slot_of

BERLIN = "Europe/Berlin"
FRIDAY_NOON = datetime(2026, 3, 27, 12, 0, tzinfo=ZoneInfo(BERLIN))  # DST starts Sun 29 March


def fires(text: str, start: datetime, n: int, zone: str = BERLIN) -> list[datetime]:
    schedule = parse_schedule(text, start, zone)
    out, at = [], start
    for _ in range(n):
        nxt = schedule.next_fire(at)
        assert nxt is not None
        out.append(nxt)
        at = nxt
    return out


def local(moments: list[datetime]) -> list[str]:
    return [m.astimezone(ZoneInfo(BERLIN)).strftime("%a %d %H:%M") for m in moments]


@pytest.mark.parametrize(
    ("text", "cron"),
    [
        ("every weekday at 8:00", "0 8 * * 1-5"),
        ("Every day at 7:30", "30 7 * * *"),
        ("every weekend at 10am", "0 10 * * 0,6"),
        ("every monday, thursday at 6pm", "0 18 * * 1,4"),
        ("every mondays at 12am", "0 0 * * 1"),
        ("every 15 minutes", "*/15 * * * *"),
        ("every hour", "0 */1 * * *"),
        ("every 6 hours", "0 */6 * * *"),
        ("0 8 * * mon-fri", "0 8 * * mon-fri"),
    ],
)
def test_recurring_phrases_are_cron(text: str, cron: str) -> None:
    schedule = parse_schedule(text, FRIDAY_NOON, BERLIN)
    assert (schedule.kind, schedule.cron, schedule.text) == ("cron", cron, " ".join(text.split()))


def test_every_weekday_skips_the_weekend_in_the_users_zone() -> None:
    assert local(fires("every weekday at 8:00", FRIDAY_NOON, 3)) == [
        "Mon 30 08:00",
        "Tue 31 08:00",
        "Wed 01 08:00",
    ]
    # 08:00 in Berlin is 07:00 UTC before the change and 06:00 after it
    first, *_ = fires("every weekday at 8:00", FRIDAY_NOON - timedelta(days=3), 1)
    assert first.astimezone(UTC).hour == 7


def test_a_time_the_spring_change_skips_runs_once_an_hour_later() -> None:
    moments = fires("every day at 2:30", FRIDAY_NOON, 3)
    assert local(moments) == ["Sat 28 02:30", "Sun 29 03:00", "Mon 30 02:30"]


def test_a_time_the_autumn_change_repeats_is_one_slot() -> None:
    """02:30 comes twice on 25 October; both fire times are the same slot, so the job runs
    once (the store claims slots, tests/jobs/test_store.py)."""
    saturday = datetime(2026, 10, 24, 12, 0, tzinfo=ZoneInfo(BERLIN))
    first, second, third = fires("every day at 2:30", saturday, 3)
    zone = ZoneInfo(BERLIN)
    assert slot_of(first, zone) == slot_of(second, zone) == "2026-10-25T02:30"
    assert second - first == timedelta(hours=1)  # in UTC: the repeated hour
    assert slot_of(third, zone) == "2026-10-26T02:30"


def test_one_time_phrases_read_relative_to_now() -> None:
    soon = parse_schedule("in 20 minutes", FRIDAY_NOON, BERLIN)
    assert soon.kind == "once"
    assert soon.next_fire(FRIDAY_NOON) == FRIDAY_NOON + timedelta(minutes=20)
    tomorrow = parse_schedule("tomorrow 9am", FRIDAY_NOON, BERLIN)
    assert tomorrow.at == datetime(2026, 3, 28, 9, 0, tzinfo=ZoneInfo(BERLIN))
    assert tomorrow.at is not None and tomorrow.next_fire(tomorrow.at) is None  # once only


def test_one_time_phrases_in_the_locales_language(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LC_ALL", "LC_TIME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")
    tomorrow = parse_schedule("demain à 9h", FRIDAY_NOON, BERLIN)
    assert tomorrow.at == datetime(2026, 3, 28, 9, 0, tzinfo=ZoneInfo(BERLIN))
    monkeypatch.setenv("LANG", "C.UTF-8")
    with pytest.raises(ScheduleError, match="cannot read"):
        parse_schedule("demain à 9h", FRIDAY_NOON, BERLIN)


def test_a_schedule_survives_being_stored() -> None:
    for text in ("every weekday at 8:00", "tomorrow 9am"):
        schedule = parse_schedule(text, FRIDAY_NOON, BERLIN)
        again = type(schedule).from_json(schedule.to_json())
        assert again == schedule
        assert again.next_fire(FRIDAY_NOON) == schedule.next_fire(FRIDAY_NOON)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty"),
        ("yesterday 9am", "has passed"),
        ("every fortnight", "every weekday at 8:00"),
        ("every 7 minutes", "divide 60"),
        ("every 5 hours", "divide 24"),
        ("every moonday at 8", "not a day"),
        ("every day at 25:00", "not a time of day"),
        ("every day at 13pm", "1 to 12"),
        ("banana split", "cannot read 'banana split'"),
        ("61 8 * * *", "not a valid cron"),
    ],
)
def test_what_is_not_a_schedule_says_what_was_wrong(text: str, says: str) -> None:
    with pytest.raises(ScheduleError, match=says):
        parse_schedule(text, FRIDAY_NOON, BERLIN)


def test_an_unknown_time_zone_is_named() -> None:
    with pytest.raises(ScheduleError, match="Mars/Olympus"):
        parse_schedule("every day at 8:00", FRIDAY_NOON, "Mars/Olympus")
