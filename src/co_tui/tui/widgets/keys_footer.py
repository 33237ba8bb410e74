"""The key bar, rebuilt only when what it shows changes.

Textual's Footer throws its keys away and mounts new ones on every bindings refresh: a focus
change, a screen's `refresh_bindings()` (the chat screen calls it as each turn starts and
ends). Mounting and styling a dozen widgets cost a short turn a fifth of its time. This
footer compares what it would show with what it shows and keeps its widgets when they match.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

Shown = tuple[tuple[str, str, bool, str], ...]


class KeysFooter(Footer):
    _shown: Shown | None = None

    def bindings_changed(self, screen: Screen) -> None:
        redraws = screen.app.app_focus and self.is_attached and screen is self.screen
        if redraws:
            shown = _shown_bindings(screen)
            if shown == self._shown:
                return
            self._shown = shown
        super().bindings_changed(screen)


def _shown_bindings(screen: Screen) -> Shown:
    return tuple(
        (key, binding.description, enabled, tooltip)
        for key, (_, binding, enabled, tooltip) in screen.active_bindings.items()
        if binding.show or key == screen.app.COMMAND_PALETTE_BINDING
    )
