"""A Markdown code block drawn as Rich's Syntax draws it, without Rich's Syntax.

The transcript draws code as `Syntax(code, lexer, theme, word_wrap=True, padding=1)`: the
theme's background, one cell of it around the code. Rich builds that through a Text per line,
a wrap, two style passes and a Padding: about 1 ms for a three-line block on 2 cores, four
times what lexing it takes, and a streamed answer with code in it renders many blocks.

When no line has to wrap (the usual case), the same cells are put together here straight from
the lexer's tokens. Anything else (a line wider than the block, a theme without a background)
is left to Rich. tests/tui/test_code_block.py checks that both draw the same cells, so a Rich
that draws code differently fails there.

A block can carry a label (its number, as `/copy n` counts it, and its language), drawn dim
at the right end of its top padding line, where no code is.
"""

from __future__ import annotations

from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.control import strip_control_codes
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme

TAB_SIZE = 4  # Syntax's default
PADDING = 1  # cells of background around the code, on every side
LABEL_STYLE = Style(dim=True)
LANGUAGE_CHARACTERS = 16  # a longer language name (the fence's info word) is cut


@lru_cache(maxsize=64)
def lexer_for(name: str) -> Lexer:
    """The lexer Rich's Syntax would find for `name` (plain text when there is none), made
    once per language, not three times per block (0.3 ms each)."""
    options = {"stripnl": False, "ensurenl": True, "tabsize": TAB_SIZE}  # Syntax's own
    try:
        return get_lexer_by_name(name, **options)
    except ClassNotFound:
        return get_lexer_by_name("text", **options)


@lru_cache(maxsize=8)
def theme_for(name: str) -> SyntaxTheme:
    return Syntax.get_theme(name)


def code_block(
    code: str, language: str, theme_name: str, width: int, label: str = ""
) -> RenderResult:
    """`code` highlighted as `language`, `width` cells wide, as the transcript shows it;
    `label` at the right of its top padding line (left out when it does not fit)."""
    lexer, theme = lexer_for(language), theme_for(theme_name)
    segments = _unwrapped(code, lexer, theme, width)
    if segments is None:
        syntax = Syntax(code, lexer, theme=theme, word_wrap=True, padding=PADDING)
        return [_Labelled(syntax, label)] if label else [syntax]
    if label and segments:
        segments[: len(_top_line(segments))] = _with_label(_top_line(segments), label)
    return segments


def _top_line(segments: list[Segment]) -> list[Segment]:
    """The segments of the first line, up to its line break."""
    for index, segment in enumerate(segments):
        if segment.text == "\n":
            return segments[:index]
    return segments


def _with_label(line: list[Segment], label: str) -> list[Segment]:
    """A padding line (background only) with `label` at its right end, in its background.
    The line as it was when the label does not fit (nor a line with more than padding)."""
    text = "".join(segment.text for segment in line)
    width, label_width = cell_len(text), cell_len(label)
    if text.strip() or label_width > width - PADDING:
        return line
    background = line[-1].style if line else None
    return [
        Segment(" " * (width - label_width), background),
        Segment(label, (background or Style()) + LABEL_STYLE),
    ]


class _Labelled:
    """Rich's Syntax, with a label on its top padding line."""

    def __init__(self, syntax: Syntax, label: str) -> None:
        self.syntax = syntax
        self.label = label

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.syntax, options, pad=False)
        new_line = Segment.line()
        for index, line in enumerate(lines):
            yield from _with_label(line, self.label) if index == 0 else line
            yield new_line


def block_label(number: int, language: str) -> str:
    """' 2 python ': what a code block's label says (no language for plain text)."""
    shown = language[:LANGUAGE_CHARACTERS] if language != "text" else ""
    return f" {number} {shown} " if shown else f" {number} "


def _unwrapped(code: str, lexer: Lexer, theme: SyntaxTheme, width: int) -> list[Segment] | None:
    """Syntax's cells for `code` at `width`, or None when a line would wrap (or the theme has
    no background to pad with): Rich draws those."""
    base = theme.get_background_style()
    code_width = width - 2 * PADDING
    if base.transparent_background or code_width < 1:
        return None
    processed = (code if code.endswith("\n") else code + "\n").expandtabs(TAB_SIZE)
    styles: dict[tuple[str, ...], Style] = {}  # by token type
    lines: list[tuple[list[Segment], int]] = []
    line: list[Segment] = []
    cells = 0
    for token_type, value in lexer.get_tokens(processed):
        style = styles.get(token_type)
        if style is None:
            style = styles[token_type] = base + theme.get_style_for_token(token_type)
        value = strip_control_codes(value)
        while value:
            part, newline, value = value.partition("\n")
            if part:
                line.append(Segment(part, style))
                cells += cell_len(part)
            if newline:
                if cells > code_width:
                    return None  # this line wraps: the rest is not worth putting together
                lines.append((line, cells))
                line, cells = [], 0
    if cells > code_width:
        return None
    if line:
        lines.append((line, cells))
    blank = Segment(" " * width, base)
    left = Segment(" " * PADDING, base)
    new_line = Segment.line()
    segments = [blank, new_line] * PADDING
    for parts, cells in lines:
        segments += [left, *parts, Segment(" " * (code_width - cells + PADDING), base), new_line]
    segments += [blank, new_line] * PADDING
    return segments
