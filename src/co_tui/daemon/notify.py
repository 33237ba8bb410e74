"""Desktop notifications from `co-tui daemon`: nobody watches the daemon, so when a job's run
ends, or calls it made wait in the inbox, the user is told by the desktop: `notify-send` where
a graphical session is reachable (Linux and other freedesktop systems), `osascript` on macOS.
Elsewhere, or when the user's `notifications` setting is off, nothing is sent.

The texts may come from a model or from mail (a job's answer). Each goes out as one line with
every hidden character shown as an escape, cut short (co_tui.safety.visible.safe_line), and as
an argument of its own, never through a shell: after `--` for notify-send, so a body that
starts with '-' is no option; as AppleScript's `argv`, so nothing needs quoting. Sending never
raises and never writes to the terminal: a notification that cannot be shown is only a False.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

from co_tui.safety.visible import TITLE_LIMIT, safe_line

if TYPE_CHECKING:
    from co_tui.session.jobs.run import RunOutcome
    from co_tui.store.jobs_store import Job

NOTIFY_TIMEOUT_S = 5.0
# Any one of them: a desktop session whose notification service notify-send can reach.
SESSION_VARIABLES = ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY")
_APPLESCRIPT = (
    "-e",
    "on run argv",
    "-e",
    "display notification (item 2 of argv) with title (item 1 of argv)",
    "-e",
    "end run",
)


def notification_command(title: str, body: str) -> list[str] | None:
    """The argv that shows `title` and `body` (made safe here), or None when this machine has
    no way to show them."""
    title, body = safe_line(title, TITLE_LIMIT), safe_line(body)
    if sys.platform == "darwin":
        osascript = shutil.which("osascript")
        return None if osascript is None else [osascript, *_APPLESCRIPT, title, body]
    if sys.platform == "win32" or not any(os.environ.get(name) for name in SESSION_VARIABLES):
        return None
    notify_send = shutil.which("notify-send")
    if notify_send is None:
        return None
    return [notify_send, "--app-name=co-tui", "--", title, body]


def desktop_notify(title: str, body: str, timeout: float = NOTIFY_TIMEOUT_S) -> bool:
    """Show a desktop notification; True when the notifier ran and succeeded."""
    command = notification_command(title, body)
    if command is None:
        return False
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def job_notice(job_id: str, kind: str, outcome: RunOutcome) -> tuple[str, str] | None:
    """The (title, body) to show for a run that ended: "co-tui briefing", "co-tui reminder"
    (its text is the answer) or "co-tui job ID", and the first of these that applies:
    - a failed run: "failed: " and why;
    - a briefing done: its headline (the answer's first line, counted by code);
    - calls held: how many wait in the inbox (the answer matters less than what waits);
    - a prompt done: its answer's first non-empty line.
    None otherwise (a run done with no answer and nothing held; a run not ended, such as one
    still running or one a killed daemon left behind): nothing worth a notification."""
    titles = {"briefing": "co-tui briefing", "reminder": "co-tui reminder"}
    title = titles.get(kind, f"co-tui job {job_id}")
    answer = _first_line(outcome.answer)
    if outcome.state == "failed":
        return title, f"failed: {outcome.detail}"
    if outcome.state != "done":
        return None
    if kind == "briefing" and answer:
        return title, answer
    if outcome.held:
        return title, f"{outcome.held} proposal(s) wait in your inbox (co-tui inbox)"
    return (title, answer) if answer else None


def notifications_wanted() -> bool:
    """The user's `notifications` setting: their own settings and environment, never a
    project's (a repository does not choose what the desktop shows). Read at each run, so a
    change applies without a restart; False when the settings cannot be read."""
    from co_tui.config.settings import SettingsError, user_settings

    try:
        return user_settings().notifications
    except (SettingsError, OSError):
        return False


def announce(job: Job, outcome: RunOutcome, timeout: float = NOTIFY_TIMEOUT_S) -> str | None:
    """Tell the desktop how `job`'s run ended, when there is something to say and the user's
    settings allow it (a reminder always: the user asked for that notification). The title
    shown, or None when nothing was. Blocks up to `timeout`: run it in a thread."""
    notice = job_notice(job.id, job.kind, outcome)
    if notice is None or (job.kind != "reminder" and not notifications_wanted()):
        return None
    title, body = notice
    return safe_line(title, TITLE_LIMIT) if desktop_notify(title, body, timeout) else None
