"""Entry point for the full-screen app: `co-tui` with no sub-command."""

from __future__ import annotations

from co_tui.config import Settings


def launch_app(
    settings: Settings, *, continue_latest: bool = False, resume: str | None = None
) -> None:
    import os

    # A full-screen app owns the terminal: nothing else may print a banner into it.
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    from co_tui.tui.app import CoApp

    app = CoApp(settings, continue_latest=continue_latest, resume=resume)
    try:
        app.run()
    finally:
        deps = app.deps
        if deps is not None:
            import asyncio

            asyncio.run(deps.sandbox.cleanup())
