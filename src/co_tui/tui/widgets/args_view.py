"""The arguments of a call that waits for approval, exactly as they will run.

Every value is shown whole (the view scrolls and takes focus, so the arrow and page keys
reach all of it) with its hidden characters made visible; shell commands keep their bash
highlighting. `lines_below` counts the rows under the visible part, for a "more" hint.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from co_tui.tui.render.visible_text import escaped, hidden_escapes, stylize_escapes, visible_text

SHELL_ARGS = {"cmd", "command", "script"}


def _as_shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def value_text(tool_name: str, name: str, value: Any) -> Text:
    if isinstance(value, str) and (name in SHELL_ARGS or "shell" in tool_name):
        plain, spans = escaped(value)
        text = Syntax(plain, "bash", theme="ansi_dark", word_wrap=True).highlight(plain)
        if text.plain.endswith("\n") and not plain.endswith("\n"):
            text.right_crop(1)  # highlight() adds a final newline
        return stylize_escapes(text, spans)
    return visible_text(_as_shown(value))


class ArgsView(VerticalScroll):
    lines_below: reactive[int] = reactive(0)

    def __init__(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool_name = tool_name
        self.args = args

    @property
    def escapes(self) -> list[str]:
        """The distinct hidden characters in the names and values, as they are shown."""
        found: dict[str, None] = {}
        for name, value in self.args.items():
            for escape in (*hidden_escapes(name), *hidden_escapes(_as_shown(value))):
                found.setdefault(escape)
        return list(found)

    def compose(self) -> ComposeResult:
        if not self.args:
            yield Static(Text("(no arguments)", style="dim"))
        yield from self._arguments()

    def _arguments(self) -> Iterator[Static]:
        for name, value in self.args.items():
            yield Static(visible_text(name, keep="", style="bold cyan"), classes="arg-name")
            yield Static(value_text(self.tool_name, name, value), classes="arg-value")

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._count_below()

    def on_resize(self) -> None:
        self._count_below()

    def _count_below(self) -> None:
        self.lines_below = max(0, round(self.max_scroll_y - self.scroll_y))
