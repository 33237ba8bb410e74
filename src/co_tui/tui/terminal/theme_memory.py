"""The theme the settings chose last time, remembered for the next first frame.

The app draws its first frame before it loads the settings (tui/app.py). Drawn in Textual's
default theme, a user whose settings name another would see it flash by for the 0.1-0.2 s
the settings take. So the theme they applied is kept in the data folder, and the next first
frame is drawn in it. The settings still decide: a theme they name is applied (and kept)
once they are loaded.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from co_tui.safety.private_files import open_private

THEME_FILE = "theme"
MAX_NAME_BYTES = 100  # Textual's theme names are a few words


def remembered_theme(data_dir: Path) -> str | None:
    """The theme the settings applied last time; None when none was kept, or for anything
    but a short regular file (a link is not followed, a pipe not waited on)."""
    try:
        fd = os.open(data_dir / THEME_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, MAX_NAME_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        name = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        return None
    if len(raw) > MAX_NAME_BYTES or not name.isprintable():
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
