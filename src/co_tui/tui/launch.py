"""Entry point for the full-screen app (built in the Textual issue)."""

from __future__ import annotations

from co_tui.config import Settings


def launch_app(settings: Settings) -> None:
    raise SystemExit("co-tui: the full-screen app is not built yet; use co-tui -p \"...\"")
