"""Entry point for the full-screen app: `co-tui` with no sub-command."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from co_tui.config.trust import LoadedSettings
    from co_tui.session.chat import ChatSession
    from co_tui.tui.shell.startup import SettingsLoader


def launch_app(
    loaded: LoadedSettings | SettingsLoader,
    *,
    continue_latest: bool = False,
    resume: str | None = None,
) -> int:
    """`loaded` as every launcher loads them (co_tui.config.trust.load_project_settings, with the
    caller's overrides): the settings that apply, and the project the app may ask about; or
    how to load them, which the app does once its first frame is drawn. Returns the exit code
    (128 + n when signal n stopped the app, 2 for settings that could not be loaded)."""
    import os

    # A full-screen app owns the terminal: nothing else may print a banner into it.
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    from co_tui.tui.app import CoApp

    if callable(loaded):
        app = CoApp(loaded, continue_latest=continue_latest, resume=resume)
    else:
        app = CoApp(
            loaded.settings,
            continue_latest=continue_latest,
            resume=resume,
            project=loaded.project,
            problems=loaded.problems,
        )
    way_back: str | None = None
    try:
        app.run()
    finally:
        import asyncio
        import gc

        session = app.made_session  # None when the settings could not be loaded
        if session is not None:
            way_back = resume_hint(session)
            asyncio.run(session.aclose())  # the sandbox and the session store
        # Everything is saved and closed. Python's own shutdown would now walk the app's
        # whole heap in several full collections (1.5 s of the 2 s exit): frozen objects are
        # skipped. What runs at exit (the local model server, telemetry) still runs.
        gc.freeze()
    if app.settings_error:  # may quote a project's file: escaped
        from co_tui.safety.visible import visible

        print(f"co-tui: {visible(app.settings_error, keep='')}", file=sys.stderr)
    if way_back:
        import contextlib

        with contextlib.suppress(OSError):  # a closed terminal (SIGHUP) has no one to tell
            print(way_back)
    return app.return_code or 0


def resume_hint(session: ChatSession) -> str | None:
    """The line printed after the app exits, naming how to come back to a session that
    has turns stored; None for an empty one (or a store that cannot say)."""
    if not session.history:
        return None  # before the import: quitting before the session loaded stays quick
    from co_tui.store.errors import SessionError

    try:
        info = session.store.info(session.session_id)
    except SessionError:
        return None
    if info.turns == 0:
        return None
    turns = "1 turn" if info.turns == 1 else f"{info.turns} turns"
    return f"co-tui: to come back to this session ({turns}): co-tui --resume {info.id[:8]}"
