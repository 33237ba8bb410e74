"""Every slash command, built-in and custom, is also in Textual's command palette (Ctrl+P).

A search ranks a match on the command's name above a match in its description (`forget`
finds /forget first, not /clear whose description says "forget"). Choosing one sends it
through the chat screen as if typed: echoed, queued behind a running turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from co_tui.tui.screens.chat import ChatScreen


def ranked(on_name: float, on_description: float) -> float:
    """A match on the name (0.5..1) always ranks above one in the description (0..0.5)."""
    return 0.5 + on_name / 2 if on_name > 0 else on_description / 2


class SlashCommandProvider(Provider):
    def _chat(self) -> ChatScreen | None:
        from co_tui.tui.screens.chat import ChatScreen

        return next((s for s in self.app.screen_stack if isinstance(s, ChatScreen)), None)

    def _entries(self) -> Iterator[tuple[str, str]]:
        from co_tui.session import commands

        for cmd in commands.COMMANDS.values():
            yield cmd.name, cmd.description
        chat = self._chat()
        if chat is not None:
            for name, custom in chat.custom_commands.items():
                if name not in commands.COMMANDS:
                    yield name, custom.description

    def _run(self, name: str) -> None:
        from co_tui.tui.widgets.prompt import PromptInput

        chat = self._chat()
        if chat is not None:
            chat.post_message(PromptInput.Submitted(f"/{name}"))

    async def discover(self) -> Hits:
        for name, description in self._entries():
            yield DiscoveryHit(f"/{name}", partial(self._run, name), help=description)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, description in self._entries():
            label = f"/{name}"
            score = ranked(matcher.match(label), matcher.match(description))
            if score > 0:
                yield Hit(
                    score, matcher.highlight(label), partial(self._run, name), help=description
                )
