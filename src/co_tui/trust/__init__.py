"""Project trust: settings from the working directory widen power only once the user trusts
the project.

- widening.py: the one list of settings that can widen power, and what each would do;
- store.py: the user's decisions (user config dir, 0600), per real path and file SHA-256;
- project.py: loading settings with the project layer trusted, or narrowed.

Usage:

    loaded = load_project_settings(Path.cwd(), trust_project=flag)
    loaded.settings          # what applies now
    loaded.project           # None, or what the project would widen and the decision

    settings = load_settings(Path.cwd())  # the same settings, when the decision does not matter
"""

from co_tui.trust.project import (
    NOT_TRUSTED,
    PROJECT_FILE,
    LoadedSettings,
    ProjectTrust,
    load_project_settings,
    load_settings,
    untrusted_notice,
    what_it_would_do,
)

__all__ = [
    "NOT_TRUSTED",
    "PROJECT_FILE",
    "LoadedSettings",
    "ProjectTrust",
    "load_project_settings",
    "load_settings",
    "untrusted_notice",
    "what_it_would_do",
]
