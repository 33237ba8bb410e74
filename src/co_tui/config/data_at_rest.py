"""At start: what co-tui keeps on disk made readable by its user only (older versions wrote
0644 files in a 0755 folder), and the configured secrets remembered for redaction."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from co_tui.config.paths import GOOGLE_TOKEN_FILE_NAME, user_config_dir, user_data_dir
from co_tui.config.settings import Settings
from co_tui.safety.private_files import DIR_MODE, FILE_MODE, chmod_owned, narrow_tree
from co_tui.safety.redaction import remember_secrets


def _config_files() -> Iterable[Path]:
    """The files co-tui itself writes into the config folder (the user writes the rest)."""
    folder = user_config_dir()
    return (folder / GOOGLE_TOKEN_FILE_NAME, folder / f"{GOOGLE_TOKEN_FILE_NAME}.tmp")


def protect_data_at_rest(settings: Settings) -> None:
    """At start: the data folder and everything in it private (older versions wrote 0644
    files in a 0755 folder), the config folder 0700 and co-tui's token file 0600; the
    configured secrets are remembered for the writers that are not handed Settings (the
    prompt history, memories)."""
    remember_secrets(settings.secret_values())
    narrow_tree(user_data_dir())
    config = user_config_dir()
    if config.is_dir():
        chmod_owned(config, DIR_MODE)
        for path in _config_files():
            chmod_owned(path, FILE_MODE)
