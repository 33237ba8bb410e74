"""What kind of job, and what it does with missed runs: the choices `co-tui jobs add` offers
(a module of its own so the command line reads them without loading the store)."""

from __future__ import annotations

from typing import Literal

# prompt: the model answers the job's prompt; briefing: session/jobs/briefing.py, the prompt
# being the user's wishes for its summary; reminder: a notification of the prompt's text,
# nothing runs (tools/reminders.py files them).
JobKind = Literal["prompt", "briefing", "reminder"]
# What a recurring job does with fire times missed while nothing ran (a laptop asleep):
# latest: the latest of them runs once, when a runner sees it; skip: none, the next on time.
CatchUp = Literal["latest", "skip"]
