"""Project trust: settings from the working directory widen power only once the user trusts
the project.

- widening.py: the one list of settings that can widen power, and what each would do;
- store.py: the user's decisions (user config dir, 0600), per real path and file SHA-256;
- project.py: loading settings with the project layer trusted, or narrowed.

Usage:

    loaded = load_project_settings(Path.cwd(), trust_project=flag)
    loaded.settings          # what applies now
    loaded.project           # None, or what the project would widen and the decision
"""

from co_tui.trust.project import (
    NOT_TRUSTED,
    PROJECT_FILE,
    LoadedSettings,
    ProjectTrust,
    load_project_settings,
    untrusted_notice,
    what_it_would_do,
)
from co_tui.trust.store import TrustStore, trust_store_path
from co_tui.trust.widening import CHECKS, Widening, review_widenings

__all__ = [
    "CHECKS",
    "NOT_TRUSTED",
    "PROJECT_FILE",
    "LoadedSettings",
    "ProjectTrust",
    "TrustStore",
    "Widening",
    "load_project_settings",
    "review_widenings",
    "trust_store_path",
    "untrusted_notice",
    "what_it_would_do",
]
