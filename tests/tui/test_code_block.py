"""A code block is drawn cell for cell as Rich's Syntax draws it (co_tui/tui/render/code_block.py),
though ordinary code is put together without Syntax; a Rich that draws code differently fails
here, not in the user's transcript."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.syntax import Syntax

from co_tui.tui.render.code_block import code_block, lexer_for
from tests.sizes import examples

LANGUAGES = ["python", "bash", "json", "rust", "javascript", "text", "nosuchlanguage"]
# Code as models write it, and what trips a terminal up: tabs, wide and combining characters,
# trailing spaces, blank lines, control characters, quotes that open strings.
CODE_CHARACTERS = st.sampled_from(
    [
        *"abcxyz019 _=+-*/()[]{}:;,.'\"#$\\`",
        "\n",
        "\n\n",
        "\t",
        "    ",
        "世",
        "é",
        "e\u0301",
        "\x1b",
        "\x07",
        "\x08",
        "\x0b",
        "\x0c",
        "\r",
    ]
)


class Drawn:
    """What `code_block` gives, as one renderable (as the Markdown element yields it)."""

    def __init__(self, code: str, language: str, width: int) -> None:
        self.parts = list(code_block(code, language, "monokai", width))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.parts


def cells(renderable: RenderableType, width: int) -> list[list[tuple[str, str]]]:
    """What a terminal shows: each line's runs of text, with their styles."""
    console = Console(width=width, color_system="truecolor", force_terminal=True)
    lines = Segment.split_lines(console.render(renderable))
    return [[(s.text, str(s.style)) for s in Segment.simplify(line)] for line in lines]


def richs_own(code: str, language: str, width: int) -> list[list[tuple[str, str]]]:
    syntax = Syntax(code, lexer_for(language), theme="monokai", word_wrap=True, padding=1)
    return cells(syntax, width)


@settings(max_examples=examples(300), deadline=None)
@given(
    code=st.lists(CODE_CHARACTERS, max_size=60).map("".join),
    language=st.sampled_from(LANGUAGES),
    width=st.integers(min_value=1, max_value=60),
)
def test_any_code_at_any_width_is_drawn_as_richs_syntax_draws_it(
    code: str, language: str, width: int
) -> None:
    code = code.rstrip()  # as a Markdown code block gives it
    assert cells(Drawn(code, language, width), width) == richs_own(code, language, width)


def test_ordinary_code_is_drawn_without_richs_syntax() -> None:
    code = 'def f(x):\n\treturn x * 2  # "doubled"\n\nprint(f(21))'
    drawn = Drawn(code, "python", 40)
    assert not any(isinstance(part, Syntax) for part in drawn.parts)
    assert cells(drawn, 40) == richs_own(code, "python", 40)


def test_a_line_wider_than_the_block_is_wrapped_by_rich() -> None:
    code = "x = " + "1 + " * 30 + "1"
    drawn = Drawn(code, "python", 40)
    assert any(isinstance(part, Syntax) for part in drawn.parts)
    lines = cells(drawn, 40)
    assert len(lines) > 3  # wrapped, not cut
    assert lines == richs_own(code, "python", 40)
