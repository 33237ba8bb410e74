"""The theme the settings chose last time, remembered for the next first frame.

The app draws its first frame before it loads the settings (tui/app.py). Drawn in Textual's
default theme, a user whose settings name another would see it flash by for the 0.1-0.2 s
the settings take. So the theme they applied is kept in the data folder, and the next first
frame is drawn in it. The settings still decide: a theme they name is applied (and kept)
once they are loaded.
"""

from __future__ import annotations

from pathlib import Path

from co_tui.private_files import open_private

THEME_FILE = "theme"


def remembered_theme(data_dir: Path) -> str | None:
    """The theme the settings applied last time; None when none was kept or it is unreadable."""
    try:
        name = (data_dir / THEME_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name or None


def remember_theme(data_dir: Path, name: str) -> None:
    """Keep `name` for the next first frame. A file that cannot be written only means one
    flash of the default theme next time."""
    if remembered_theme(data_dir) == name:
        return
    try:
        with open_private(data_dir / THEME_FILE, "w") as fh:
            fh.write(f"{name}\n")
    except OSError:
        pass
