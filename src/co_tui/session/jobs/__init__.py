"""Jobs: prompts that run on a schedule while nobody types (`co-tui jobs`, `co-tui daemon`).

- `schedule.py`: what the user wrote ("every weekday at 8:00", "in 20 minutes", "tomorrow
  9am", cron) as a schedule in their time zone, and its next fire time.
- `store.py`: jobs, their runs and what their runs proposed, in `jobs.db` in the data
  folder (0600). A run is claimed once per job and slot; a proposal once per run and call.
- `frontend.py`: the frontend a job's turn runs with: every call that needs approval is
  held for the user, never run.
- `run.py`: one run of a job as an ordinary headless session.
"""
