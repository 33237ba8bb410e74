"""Code blocks in the transcript's Markdown (co_tui/tui/render/markdown.py) look exactly as Rich
draws them, whether Pygments knows their language or not, though their lexers are kept, but for
the label with its number; so does what the chat does not adjust, though the parser is made
once. An image shows its address. The numbers on code blocks are those `/copy n` counts."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.markdown import Markdown
from rich.segment import Segment

from co_tui.session.commands.code_blocks import code_blocks
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
    assert len(ours) == len(rich_own)
    for our_line, richs_line in zip(ours, rich_own, strict=True):
        if our_line != richs_line:  # only the label, on a line of background alone
            assert not plain(richs_line).strip() and plain(our_line).split()[0] == "1"
            assert len(plain(our_line)) == len(plain(richs_line))
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
    assert {name for name in vars(ours) if not name.startswith("_")} == vars(richs).keys()
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


def plain(line: list[tuple[str, str]]) -> str:
    return "".join(run for run, _ in line)


ANSWER = (
    "First:\n\n```python\nprint('one')\n```\n\n"
    "- in a list:\n\n  ```\n  two\n  ```\n\n"
    "> ```bash\n> echo three\n> ```\n\n"
    "    indented, not counted\n\n"
    "~~~~rust\nlet four = 4; // ``` inside a longer fence\n~~~~\n\n"
    "````\nfive, never closed\n"
)


def labels(text: str, first: int = 1) -> list[str]:
    """The labels of the code blocks, top to bottom: the last words on a line of code."""
    console = Console(width=60, color_system="truecolor", force_terminal=True)
    lines = Segment.split_lines(console.render(TranscriptMarkdown(text, first)))
    last = [line[-1] for line in lines if line and line[-1].style and line[-1].style.dim]
    return [word for word in (s.text.strip() for s in last) if word[:1].isdigit()]


def test_each_fenced_block_shows_the_number_copy_counts_and_its_language() -> None:
    assert labels(ANSWER) == ["1 python", "2", "3 bash", "4 rust", "5"]
    assert len(code_blocks(ANSWER)) == 5
    assert code_blocks(ANSWER)[1] == "two" and code_blocks(ANSWER)[3].startswith("let four")


def test_a_piece_of_a_streamed_answer_numbers_on_from_the_pieces_before() -> None:
    assert labels("```python\nx = 1\n```\n", first=4) == ["4 python"]


def test_a_label_that_does_not_fit_is_left_out() -> None:
    console = Console(width=5, color_system="truecolor", force_terminal=True)
    lines = Segment.split_lines(console.render(TranscriptMarkdown("```python\nx\n```\n")))
    assert all(not (segment.style and segment.style.dim) for line in lines for segment in line)


def test_a_language_name_is_shown_cut_and_without_its_escape_codes() -> None:
    (label,) = labels("```py\x1b[31mthon" + "x" * 40 + "\nx = 1\n```\n")
    assert "\x1b" not in label and len(label) <= len("1 ") + 16


def test_a_rendered_block_keeps_its_text_not_its_tokens() -> None:
    """A transcript keeps every block of a long answer: after a render only the text stays
    (tokens are parsed again when the width changes), and a second render draws the same,
    code block numbers included."""
    text = "Intro\n\n```python\nx = 1\n```\n\nmid\n\n```sh\nls\n```\n"
    block = TranscriptMarkdown(text, first_code_block=3)
    first = drawn(block)
    assert block.parsed == []
    assert not [value for value in vars(block).values() if isinstance(value, list) and value]
    assert drawn(block) == first
    labels = ["".join(t for t, _ in line).strip() for line in first]
    assert "3 python" in labels and "4 sh" in labels
    assert block.code_block_count == 2
