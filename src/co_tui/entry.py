"""The console script. Bare `co-tui` opens the app without importing the command-line parser
(typer and click cost start-up time the user sees); anything else goes through cli.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from co_tui.shims import install_shims

if TYPE_CHECKING:
    from co_tui.config.trust import LoadedSettings

EXIT_ERROR = 1


def main() -> None:
    install_shims()  # before anything imports openai, pydantic-ai or Textual
    # pydantic-ai prints a promotional banner on stderr at the first run; not in our output.
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    if len(sys.argv) > 1:
        from co_tui.cli import main as cli_main

        cli_main()
        return
    from co_tui.tui.terminal.idle_gc import pause_collections

    pause_collections()  # until the first frame; then the app collects when idle
    from co_tui.tui.launch import launch_app

    try:
        code = launch_app(load_settings_here)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("CO_TUI_DEBUG"):
            raise
        from co_tui.safety.visible import visible

        message = visible(f"{type(exc).__name__}: {exc}", keep="")
        print(
            f"co-tui: internal error: {message} (set CO_TUI_DEBUG=1 to see the traceback)",
            file=sys.stderr,
        )
        sys.exit(EXIT_ERROR)
    if code:  # 2: settings that could not be loaded; 128 + n: stopped by signal n
        sys.exit(code)


def load_settings_here() -> LoadedSettings:
    """The settings for the working directory, and their files made private: what the app
    loads right after its first frame, where pydantic and the settings sources no longer
    delay it. Raises SettingsError."""
    from co_tui.config.data_at_rest import protect_data_at_rest
    from co_tui.config.trust import load_project_settings

    loaded = load_project_settings(Path.cwd())
    protect_data_at_rest(loaded.settings)  # data folder 0700, files 0600; secrets remembered
    return loaded
