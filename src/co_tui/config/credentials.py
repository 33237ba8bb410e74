"""`co-tui init`: a provider's key, URL and model saved in the user's config folder, in a
file of co-tui's own (credentials.json, 0600, never a link), which the settings read as a
user layer over settings.json. Never in the project: a key there would be committed."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from co_tui.config.paths import user_credentials_path
from co_tui.config.settings import (
    Settings,
    SettingsError,
    SettingsFileSource,
    SettingsLayer,
    read_user_settings_file,
)
from co_tui.safety.private_files import FILE_MODE, private_dir

# What each provider needs saved: the settings `co-tui init PROVIDER` may write.
PROVIDER_FIELDS = {
    "gemini": ("gemini_api_key", "", "gemini_model"),
    "openai": ("openai_api_key", "openai_base_url", "openai_model"),
    "ollama": ("", "ollama_host", "ollama_model"),
}


def credential_values(provider: str, key: str, url: str, model: str) -> dict[str, str]:
    """The settings to save for `provider`. Raises SettingsError naming what is missing."""
    if provider not in PROVIDER_FIELDS:
        raise SettingsError(
            f"unknown provider {provider!r}: use one of {', '.join(PROVIDER_FIELDS)}"
        )
    key_field, url_field, model_field = PROVIDER_FIELDS[provider]
    values = {"llm_provider": provider}
    if key and not key_field:
        raise SettingsError(f"{provider} takes no key")
    if url and not url_field:
        raise SettingsError(f"{provider} takes no URL")
    if key_field == "gemini_api_key" and not key:
        raise SettingsError("gemini needs a key")
    if url:
        _check_url(url)
    if provider == "openai" and not (key or url):
        raise SettingsError("openai needs a URL or a key, or both")
    for field, value in ((key_field, key), (url_field, url), (model_field, model)):
        if field and value:
            values[field] = value
    return values


def _check_url(url: str) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    printable = url.isprintable() and " " not in url
    if parts.scheme not in ("http", "https") or not parts.hostname or not printable:
        raise SettingsError(
            f"the URL {url!r} is not an http(s) URL such as http://127.0.0.1:8080/v1"
        )


def save_credentials(values: dict[str, str], path: Path | None = None) -> Path:
    """Merge `values` into the credentials file and write it whole, 0600, through a new file
    renamed over it, so a crash leaves the old one. Refuses a link at its path (it would send
    the keys wherever the link points) and anything the settings would refuse to read."""
    path = path or user_credentials_path()
    existing = read_user_settings_file(path, follow_link=False)  # SettingsError for a link
    merged: dict[str, Any] = {}
    if existing is not None:
        merged = SettingsFileSource("user", path, existing).values
    merged.update(values)
    SettingsLayer("user", str(path), merged)  # what would not load is not written
    private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(merged, fh, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
    return path


def with_credentials(settings: Settings, values: dict[str, str]) -> Settings:
    """`settings` with `values` applied, each validated as the settings file would be.
    Raises SettingsError naming the value that is wrong."""
    from pydantic import ValidationError

    updated = settings.model_copy()
    for field, value in values.items():
        try:
            setattr(updated, field, value)  # validate_assignment: a str becomes a SecretStr
        except ValidationError as exc:
            raise SettingsError(f"{field}: {exc.errors()[0]['msg']}") from None
    return updated


def saved_provider(path: Path | None = None) -> str | None:
    """The provider the credentials file selects (None: no file, or it selects none).
    Raises SettingsError for a file that cannot be read (a link, bad JSON, a bad value)."""
    path = path or user_credentials_path()
    data = read_user_settings_file(path, follow_link=False)
    if data is None:
        return None
    provider = SettingsFileSource("user", path, data).values.get("llm_provider")
    return provider if isinstance(provider, str) and provider else None
