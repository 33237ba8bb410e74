"""Jobs: prompts that run on a schedule while nobody types (`co-tui jobs`, `co-tui daemon`).

- `schedule.py`: what the user wrote ("every weekday at 8:00", "in 20 minutes", "tomorrow
  9am", cron) as a schedule in their time zone, and its next fire time.
- `kinds.py`: a job's kind (a prompt, a briefing) and catch-up policy.
- `store.py`: jobs, their runs and what their runs proposed, in `jobs.db` in the data
  folder (0600). A run is claimed once per job and slot; a proposal once per run and call.
- `frontend.py`: the frontend a job's turn runs with: every call that needs approval is
  held for the user, never run.
- `run.py`: one run of a job as an ordinary headless session, on the least-privilege
  profile; `briefing.py`: the morning briefing's turn.
- `envelope.py`: the signing key and the seal over each proposal; `decide.py`: approving,
  denying and expiring a proposal, each told to the job's session.
- `daemon_lock.py`: which process runs a data folder's jobs; `companion.py`: the daemon the
  open app starts when none runs.
- `listing.py`: jobs and proposals as lines of text.
"""
