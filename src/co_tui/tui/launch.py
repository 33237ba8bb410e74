"""Entry point for the full-screen app: `co-tui` with no sub-command."""

from __future__ import annotations

from co_tui.config import Settings
from co_tui.trust import LoadedSettings


def launch_app(
    settings: Settings | LoadedSettings,
    *,
    continue_latest: bool = False,
    resume: str | None = None,
) -> None:
    """`settings` as the CLI loads them (with the project's trust), or bare Settings from
    load_settings: then the project's trust is looked up here, so the app can still ask about
    a project it does not trust yet (trusting it then applies the settings files without
    the caller's overrides)."""
    import os
    from pathlib import Path

    # A full-screen app owns the terminal: nothing else may print a banner into it.
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    from co_tui.tui.app import CoApp

    if isinstance(settings, Settings):
        from co_tui.trust import load_project_settings

        settings = LoadedSettings(settings, load_project_settings(Path.cwd()).project)
    app = CoApp(
        settings.settings,
        continue_latest=continue_latest,
        resume=resume,
        project=settings.project,
    )
    try:
        app.run()
    finally:
        deps = app.deps
        if deps is not None:
            import asyncio

            asyncio.run(deps.sandbox.cleanup())
