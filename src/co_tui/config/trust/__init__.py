"""Project trust: what a working directory ships for co-tui applies only as far as the user
trusts the project.

- project_files.py: every project file, read once (what is trusted is what loads);
- allowlist.py: the settings an untrusted project may change (they only narrow, or are inert);
- widening.py: how a setting's change is compared and worded;
- store.py: the user's decisions (user config dir, 0600), per real path and files' digest;
- project.py: loading settings with the project trusted, or held back.

Usage:

    loaded = load_project_settings(Path.cwd(), trust_project=flag)
    loaded.settings          # what applies now
    loaded.project           # None, or what waits for trust and the decision
    loaded.view              # the project's files as the session reads them

    settings = load_settings(Path.cwd())  # the same settings, when the decision does not matter
"""

from co_tui.config.trust.project import (
    HOW_TO_TRUST,
    NOT_TRUSTED,
    PROJECT_FILE,
    LoadedSettings,
    ProjectTrust,
    load_project_settings,
    load_settings,
    stored_view,
    untrusted_notice,
    what_it_would_do,
)
from co_tui.config.trust.project_files import ProjectFiles, ProjectView, read_project_files

__all__ = [
    "HOW_TO_TRUST",
    "NOT_TRUSTED",
    "PROJECT_FILE",
    "LoadedSettings",
    "ProjectFiles",
    "ProjectTrust",
    "ProjectView",
    "load_project_settings",
    "load_settings",
    "read_project_files",
    "stored_view",
    "untrusted_notice",
    "what_it_would_do",
]
