"""Code blocks in the transcript's Markdown (co_tui/tui/render/markdown.py) look exactly as Rich
draws them, whether Pygments knows their language or not, though their lexers are kept; so does
what the chat does not adjust, though the parser is made once. An image shows its address."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.markdown import Markdown
from rich.segment import Segment

from co_tui.tui.render.markdown import TranscriptMarkdown


def drawn(renderable: Markdown) -> list[list[tuple[str, str]]]:
    """What a terminal shows: each line's runs of text, with their styles."""
    console = Console(width=40, color_system="truecolor", force_terminal=True)
    lines = Segment.split_lines(console.render(renderable))
    return [[(s.text, str(s.style)) for s in Segment.simplify(line)] for line in lines]


@pytest.mark.parametrize(
    "block",
    [
        "```python\ndef f(x):\n\treturn x * 2  # doubled\n```\n",
        "```nosuchlanguage\nplain words\n```\n",
        "```\nno language at all\n```\n",
        "    an indented code block\n",
        "- an item with code:\n\n  ```python\n  x = 1  # inside a list\n  ```\n",
    ],
)
def test_a_code_block_is_drawn_as_rich_draws_it(block: str) -> None:
    ours = drawn(TranscriptMarkdown(block))
    rich_own = drawn(Markdown(block, code_theme="monokai", hyperlinks=True))
    assert ours == rich_own
    assert all(style for line in ours for _, style in line)  # on the theme's background


def test_what_the_chat_does_not_adjust_is_drawn_as_rich_draws_it() -> None:
    text = (
        "Some **bold**, *emphasis*, `code` and ~~struck~~ words.\n\n"
        "- one\n- two, with *more*\n\n"
        "A second paragraph, long enough to wrap at forty columns.\n"
    )
    ours = drawn(TranscriptMarkdown(text))
    assert ours == drawn(Markdown(text, code_theme="monokai", hyperlinks=True))
    assert "struck" in "".join(text for line in ours for text, _ in line)


def test_it_is_made_as_richs_markdown_is() -> None:
    """Its __init__ stands in for Rich's (to make the parser once): a Rich whose Markdown is
    made with other attributes fails here, not in the user's transcript."""
    text = "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~ and https://example.com\n"
    ours, richs = TranscriptMarkdown(text), Markdown(text)
    assert vars(ours).keys() == vars(richs).keys()
    assert [t.type for t in ours.parsed] == [t.type for t in richs.parsed]
    assert {"table_open", "inline"} <= {t.type for t in ours.parsed}


def shown(text: str) -> str:
    """The characters a terminal shows for `text`, lines joined."""
    return "\n".join("".join(run for run, _ in line).rstrip() for line in drawn_wide(text))


def drawn_wide(text: str) -> list[list[tuple[str, str]]]:
    console = Console(width=100, color_system="truecolor", force_terminal=True)
    lines = Segment.split_lines(console.render(TranscriptMarkdown(text)))
    return [[(s.text, str(s.style)) for s in Segment.simplify(line)] for line in lines]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "![alt](https://evil.example/x.png?data=c2VjcmV0)",
            "🌆 alt (https://evil.example/x.png?data=c2VjcmV0)",
        ),
        ("![](https://e.example/a/b.png)", "🌆 b.png (https://e.example/a/b.png)"),
        ("![same](same)", "🌆 same (same)"),  # shown even when it reads like the alt text
        # the address as the link goes: escaped by the parser, never read as markup
        (
            "![a *b*](<https://x.example/[red]a b.png>)",
            "🌆 a *b* (https://x.example/%5Bred%5Da%20b.png)",
        ),
        (
            "[![badge](https://img.example/b.svg)](https://ci.example/run)",
            "🌆 badge (https://img.example/b.svg)  (https://ci.example/run)",
        ),
    ],
)
def test_an_image_shows_its_address(text: str, expected: str) -> None:
    assert shown(text) == expected


def test_an_image_address_is_a_link_to_itself() -> None:
    address = "https://evil.example/x.png?data=c2VjcmV0"
    runs = [run for line in drawn_wide(f"![alt]({address})") for run in line]
    (style,) = [style for run, style in runs if run == address]
    assert style.endswith(f"link {address}")
