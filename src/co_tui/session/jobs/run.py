"""One run of a job: an ordinary session in the job's workspace (listed in `/resume`, its
spans in the span viewer), its prompt the job's, with the job's frontend holding every call
that needs approval. The workspace's settings load as for any session there: the project's
only as far as the user trusts it, and that trust is written in the run's record.

A job runs on the least-privilege profile: no allow rule (settings.json's or saved for the
project) and no approve-all applies, so only what the built-in policy runs without asking
(read-only commands in an isolating sandbox, read-only tools) runs; every other call is
filed in the inbox. Its model is `jobs_model`'s (the embedded one unless the user chose).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from co_tui.session.jobs.frontend import JobFrontend
from co_tui.store.inbox_seal import SigningKey
from co_tui.store.jobs_store import Job, JobStore, RunState

if TYPE_CHECKING:
    from co_tui.config.settings import Settings
    from co_tui.config.trust import LoadedSettings
    from co_tui.session.chat import ChatSession
    from co_tui.turn.runner import TurnResult

JOBS_MODEL_LOCAL = "local"
JOBS_MODEL_SAME = "same"


@dataclass(frozen=True)
class RunOutcome:
    state: RunState
    session_id: str | None
    held: int  # calls filed for approval
    detail: str
    answer: str = ""  # the run's last answer (a briefing's summary and facts)


def _loaded(workspace: Path) -> tuple[LoadedSettings, str]:
    """The workspace's settings, and its trust in words."""
    from co_tui.config.trust import load_project_settings

    loaded = load_project_settings(workspace)
    if loaded.project is None:
        return loaded, "no project files"
    return loaded, f"project {loaded.project.decision}"


def job_settings(settings: Settings) -> Settings:
    """The settings a job runs with: its model (`jobs_model`), approve-all off."""
    update: dict[str, object] = {"auto_confirm": False}
    choice = settings.jobs_model.strip()
    if choice == JOBS_MODEL_LOCAL:
        update |= {"llm_provider": "local", "model": ""}
    elif choice and choice != JOBS_MODEL_SAME:
        update["model"] = choice
    return settings.model_copy(update=update)


async def run_job(store: JobStore, job: Job, slot: str) -> RunOutcome:
    """Run `job` for its claimed `slot` and record how it ended. Never raises for what the
    run met (a model that fails, a missing workspace): that is the run's `failed` state."""
    from co_tui.config.settings import SettingsError
    from co_tui.session.chat import ChatSession

    if job.kind == "reminder":  # its notification is all: nothing runs
        store.finish(job.id, slot, "done", "reminded")
        return RunOutcome("done", None, 0, "reminded", job.prompt)
    if not job.workspace.is_dir():
        detail = f"its workspace {job.workspace} is not a folder"
        store.finish(job.id, slot, "failed", detail)
        return RunOutcome("failed", None, 0, detail)
    try:
        loaded, trust = _loaded(job.workspace)
    except SettingsError as exc:
        store.finish(job.id, slot, "failed", str(exc))
        return RunOutcome("failed", None, 0, str(exc))
    try:  # no key, no seal: nothing may be filed, so nothing runs
        key = SigningKey()
    except (OSError, ValueError) as exc:
        detail = f"{trust}; the inbox key cannot be used: {exc}"
        store.finish(job.id, slot, "failed", detail)
        return RunOutcome("failed", None, 0, detail)
    frontend = JobFrontend(store, key, job, slot)
    session = ChatSession(
        job_settings(loaded.settings),
        workspace=job.workspace,
        frontend=frontend,
        project=loaded.view,
    )
    state: RunState = "failed"
    detail = trust
    session_id: str | None = None  # once the session started (and so is stored)
    answer = ""
    try:
        await session.start(None)
        deps = session.built()[1]
        deps.permissions = deps.permissions.without_allowances()
        session_id = session.session_id
        store.started(job.id, slot, session_id)
        if job.kind == "briefing":
            result = await _briefing(session, store, job)
        else:
            result = await session.run(job.prompt)
        answer = result.output or ""
        state = "failed" if result.error or result.interrupted else "done"
        if result.error:
            detail = f"{trust}; {result.error}"
    except Exception as exc:  # the model or a service could not start: the run failed
        detail = f"{trust}; {type(exc).__name__}: {exc}"
    finally:
        await session.aclose()
    detail += f"; {frontend.held} call(s) held for approval" if frontend.held else ""
    store.finish(job.id, slot, state, detail)
    return RunOutcome(state, session_id, frontend.held, detail, answer)


async def _briefing(session: ChatSession, store: JobStore, job: Job) -> TurnResult:
    from co_tui.session.jobs.briefing import run_briefing

    bundle = session.built()[0]
    if bundle.resolved is None:
        raise RuntimeError("the briefing needs a configured model to summarise")
    return await run_briefing(session, bundle.resolved.model, store.proposals(), job.prompt)
