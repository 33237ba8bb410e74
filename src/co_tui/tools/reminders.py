"""set_reminder: a reminder at a later moment, as a desktop notification.

The call asks first, like any side effect. Approved, it files a one-time job of kind
`reminder` in the jobs store (store/jobs_store.py) for the session's folder; the daemon, or
the open app's companion daemon, raises the notification when it falls due. Nothing else
runs then: no model, no tool.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import ModelRetry, RunContext, ToolReturn

from co_tui.context.deps import CoDeps
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.tools.tool_return import tool_return

MAX_TEXT_CHARS = 300


async def set_reminder(ctx: RunContext[CoDeps], when: str, text: str) -> ToolReturn:
    """Set a reminder: a desktop notification at a later moment.

    Args:
        when: The moment, as the user said it ("in 2 hours"); never repeating.
        text: What the reminder says.
    """
    from co_tui.store.job_schedule import ScheduleError, parse_schedule
    from co_tui.store.jobs_runner_lock import wake_daemon
    from co_tui.store.jobs_store import JobStore

    text = " ".join(text.split())
    if not text:
        raise ModelRetry("The reminder is empty: pass what to remind the user of in `text`.")
    if len(text) > MAX_TEXT_CHARS:
        raise ModelRetry(f"The reminder is too long: at most {MAX_TEXT_CHARS} characters.")
    now = ctx.deps.clock()
    try:
        schedule = parse_schedule(when, now)
    except ScheduleError as exc:
        raise ModelRetry(f"{exc}. Say when as 'in 20 minutes' or 'tomorrow 9am'.") from None
    if schedule.at is None:
        raise ModelRetry(
            f"{when!r} repeats: a reminder is for one moment ('in 20 minutes', 'tomorrow "
            "9am'). For something that repeats, the user adds a job: `co-tui jobs add`."
        )
    store = JobStore()
    try:
        job = store.add(text, schedule, ctx.deps.workspace, created=now, kind="reminder")
    finally:
        store.close()
    wake_daemon(store.path)
    moment = schedule.at.astimezone().strftime("%a %Y-%m-%d %H:%M %Z")
    shown = (
        f"Reminder {job.id} set for {moment}: {text}\n"
        "It pops up as a desktop notification while `co-tui daemon` or the app runs."
    )
    return tool_return(ToolDisplay(shown), reminder_id=job.id, at=schedule.at.isoformat())


TOOLS: list[Any] = [set_reminder]
