"""Keeps the prompt's draft in the session's draft file (co_tui/store/drafts.py).

The chat screen calls `keep` (at most every DRAFT_SAVE_S while the prompt changes, at once
when all of it is sent); the file is named after the session the app has open then, so a
draft typed before /resume or a fork follows the session it is now in, and the file of the
one it left goes. Writing a short draft took 0.4 ms here and one with an 80 KB paste 1.2 ms
(the paste is redacted once, not at every save: that alone takes 12 ms), at most twice a
second while typing, so it is written on the UI thread. A draft that
cannot be kept is said once, in a toast, and the app goes on.

Nothing is written until the app has looked for the draft to bring back (`ready`): keys
typed while the app starts would otherwise replace the kept draft before it is read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from co_tui.store.drafts import Draft, DraftError, DraftStore


class DraftKeeper:
    def __init__(
        self,
        store: DraftStore,
        session_id: Callable[[], str],
        cwd: Path,
        warn: Callable[[str], None],
    ) -> None:
        self.store = store
        self._session_id = session_id
        self._cwd = cwd
        self._warn = warn
        self._kept_as: str | None = None  # the session whose file holds the draft
        self._warned = False
        self.ready = False  # the kept draft was looked for (and is in the prompt)

    def took_over(self, session_id: str) -> None:
        """The prompt took the draft of `session_id` (one never stored): the next `keep`
        moves it to the session open now."""
        self._kept_as = session_id

    def keep(self, draft: Draft) -> None:
        if not self.ready:
            return
        session_id = self._session_id()
        try:
            if self._kept_as is not None and self._kept_as != session_id:
                self.store.discard(self._kept_as)
            self.store.save(session_id, draft, self._cwd)
        except DraftError as exc:
            if not self._warned:
                self._warned = True
                self._warn(f"{exc}; the draft lives only in the prompt")
            return
        self._kept_as = None if draft.empty else session_id
