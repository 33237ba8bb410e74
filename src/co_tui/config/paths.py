"""Where co-tui keeps the user's settings and data (platformdirs), apart from the settings
machinery: the app's first frame needs these paths and not pydantic."""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP_NAME = "co-tui"
PROJECT_DIR_NAME = ".co-tui"  # a project's own settings, commands, skills, knowledge
SETTINGS_FILE_NAME = "settings.json"
CREDENTIALS_FILE_NAME = "credentials.json"  # `co-tui init` writes it, 0600, never a link
GOOGLE_TOKEN_FILE_NAME = "google_token.json"  # `co-tui auth google` writes it, 0600


def user_config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def exports_dir() -> Path:
    """Where `/export` writes when it is given no path: private, never the repository."""
    return user_data_dir() / "exports"


def models_dir() -> Path:
    """Where `co-tui model pull` puts GGUF files (the `local_model` setting loads from here)."""
    return user_data_dir() / "models"


def user_settings_path() -> Path:
    return user_config_dir() / SETTINGS_FILE_NAME


def user_credentials_path() -> Path:
    return user_config_dir() / CREDENTIALS_FILE_NAME


def project_settings_path(cwd: Path) -> Path:
    return cwd / PROJECT_DIR_NAME / SETTINGS_FILE_NAME
