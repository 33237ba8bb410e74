"""Jobs: prompts that run on a schedule while nobody types (`co-tui jobs`, `co-tui daemon`).

What is stored lives a floor below, in co_tui.store (a tool may file a reminder there):
`job_schedule.py` (what the user wrote as a schedule in their time zone, its next fire
time), `job_kinds.py`, `jobs_store.py` (jobs, runs and proposals in `jobs.db`, 0600; a run
claimed once per job and slot, a proposal filed once per run and call) and `inbox_seal.py`
(the signing key and the seal over each proposal), `jobs_runner_lock.py` (which process runs
the jobs). Here:

- `frontend.py`: the frontend a job's turn runs with: every call that needs approval is
  held for the user, never run.
- `run.py`: one run of a job as an ordinary headless session, on the least-privilege
  profile; `briefing.py`: the morning briefing's turn.
- `decide.py`: approving, denying and expiring a proposal, each told to the job's session.
- `companion.py`: the daemon the open app starts when none runs (store/jobs_runner_lock.py
  says whether one does).
- `listing.py`: jobs and proposals as lines of text.
"""
