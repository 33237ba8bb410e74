"""Code blocks in the transcript's Markdown (co_tui/tui/markdown.py) look exactly as Rich draws
them, whether Pygments knows their language or not, though their lexers are kept."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.markdown import Markdown

from co_tui.tui.markdown import TranscriptMarkdown


def drawn(renderable: Markdown) -> list[tuple[str, str]]:
    console = Console(width=40, color_system="truecolor", force_terminal=True)
    return [(s.text, str(s.style)) for s in console.render(renderable)]


@pytest.mark.parametrize(
    "block",
    [
        "```python\ndef f(x):\n\treturn x * 2  # doubled\n```\n",
        "```nosuchlanguage\nplain words\n```\n",
        "```\nno language at all\n```\n",
        "    an indented code block\n",
    ],
)
def test_a_code_block_is_drawn_as_rich_draws_it(block: str) -> None:
    ours = drawn(TranscriptMarkdown(block))
    rich_own = drawn(Markdown(block, code_theme="monokai", hyperlinks=True))
    assert ours == rich_own
    assert any(style for _, style in ours)  # highlighted, on the theme's background
