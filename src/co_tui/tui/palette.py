"""Every slash command is also in Textual's command palette (Ctrl+P)."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from co_tui.tui.messages import CommandRequested


class SlashCommandProvider(Provider):
    def _run(self, name: str) -> None:
        self.app.post_message(CommandRequested(f"/{name}"))

    async def discover(self) -> Hits:
        from co_tui import commands

        for cmd in commands.COMMANDS.values():
            yield DiscoveryHit(f"/{cmd.name}", partial(self._run, cmd.name), help=cmd.description)

    async def search(self, query: str) -> Hits:
        from co_tui import commands

        matcher = self.matcher(query)
        for cmd in commands.COMMANDS.values():
            label = f"/{cmd.name}"
            score = matcher.match(f"{label} {cmd.description}")
            if score > 0:
                run = partial(self._run, cmd.name)
                yield Hit(score, matcher.highlight(label), run, help=cmd.description)
