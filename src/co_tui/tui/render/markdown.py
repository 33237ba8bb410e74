"""The cheap Rich renderable that finished transcript text becomes.

Rich's Markdown, adjusted for a chat: headings on the left, block quotes dim with a bar
(Rich's magenta reads as an error), ordered lists numbered "1.", a link's address shown
after its text when they differ (a terminal may not make links clickable), an image's
address always shown after its `🌆 alt` (it can carry data away, and no image is shown),
and table cells that wrap instead of being cut. Code blocks look as Rich draws them, at a
quarter of the cost (tui/render/code_block.py), each fenced one labelled with its number as
`/copy n` counts it (session/commands/code_blocks.py), and the Markdown parser is made once,
not once per document (a quarter of rendering a streamed answer).
"""

from __future__ import annotations

from typing import ClassVar

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich import box
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.markdown import (
    BlockQuote,
    CodeBlock,
    Heading,
    ImageItem,
    ListItem,
    Markdown,
    TableElement,
)
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

from co_tui.safety.visible import visible
from co_tui.session.commands.code_blocks import is_numbered
from co_tui.tui.render.code_block import block_label, code_block

QUOTE_BAR = "▎ "


class _LeftHeading(Heading):
    LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = dict.fromkeys(
        ("h1", "h2", "h3", "h4", "h5", "h6"), "left"
    )


class _CodeBlock(CodeBlock):
    number: int | None = None  # as `/copy n` counts it; None: an indented block, not counted

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> CodeBlock:
        block = cls((token.info or "").partition(" ")[0] or "text", markdown.code_theme)
        if isinstance(markdown, TranscriptMarkdown):
            block.number = markdown.code_block_number(token)
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        label = block_label(self.number, self.lexer_name) if self.number is not None else ""
        yield from code_block(code, self.lexer_name, self.theme, options.max_width, label)


class _Quote(BlockQuote):
    style_name = "italic"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width - len(QUOTE_BAR)
        lines = console.render_lines(self.elements, options.update(width=width), style=self.style)
        bar = Segment(QUOTE_BAR, console.get_style("dim"))
        for line in lines:
            yield bar
            for segment in line:  # dim the quote's own colours too
                yield Segment(
                    segment.text, (segment.style or self.style) + console.get_style("dim")
                )
            yield Segment.line()


class _ListItem(ListItem):
    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        width = len(str(last_number)) + 3  # " 10. "
        lines = console.render_lines(
            self.elements, options.update(width=options.max_width - width), style=self.style
        )
        number_style = console.get_style("markdown.item.number", default="none")
        numeral = Segment(f"{number}.".rjust(width - 1) + " ", number_style)
        padding = Segment(" " * width)
        for index, line in enumerate(lines):
            yield numeral if index == 0 else padding
            yield from line
            yield Segment.line()


class _Image(ImageItem):
    """Rich's `🌆 alt`, followed by the image's address: ` (https://…)`, itself a link."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for placeholder in super().__rich_console__(console, options):
            if not self.destination or not isinstance(placeholder, Text):
                yield placeholder
                continue
            address = Text(self.destination, style=console.get_style("markdown.link_url"))
            if self.hyperlinks:
                address.stylize(Style(link=self.destination))
            placeholder.rstrip()
            yield Text.assemble(placeholder, " (", address, ") ", end="")


class _WrappingTable(TableElement):
    """Rich's Markdown table, with cells that fold a long word instead of ending it in '…'."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(
            box=box.SIMPLE,
            pad_edge=False,
            style="markdown.table.border",
            show_edge=True,
            collapse_padding=True,
        )
        if self.header is not None and self.header.row is not None:
            for cell in self.header.row.cells:
                heading = cell.content.copy()
                heading.stylize("markdown.table.header")
                table.add_column(heading, overflow="fold")
        if self.body is not None:
            for row in self.body.rows:
                table.add_row(*(cell.content for cell in row.cells))
        yield table


def _show_link_addresses(tokens: list[Token]) -> None:
    """After each link whose text is not its address, add ' (address)', itself a link."""
    for token in tokens:
        if token.children:
            token.children = _with_addresses(token.children)


def _with_addresses(children: list[Token]) -> list[Token]:
    out: list[Token] = []
    href: str | None = None
    words: list[str] = []
    for child in children:
        out.append(child)
        if child.type == "link_open":
            href, words = str(child.attrs.get("href", "")), []
        elif href is not None and child.type in ("text", "code_inline"):
            words.append(child.content)
        elif child.type == "link_close" and href is not None:
            label = "".join(words).strip()
            if href and label not in (href, href.removeprefix("mailto:")):
                out += [
                    Token("text", "", 0, content=" ("),
                    Token("link_open", "a", 1, attrs={"href": href}),
                    Token("text", "", 0, content=href),
                    Token("link_close", "a", -1),
                    Token("text", "", 0, content=")"),
                ]
            href = None
    return out


# Rich's Markdown makes this parser anew for each document: 0.25-1 ms, more than parsing a
# streamed answer's piece of 300 characters takes. It is made once here (parse is reentrant:
# each call has its own state).
_PARSER = MarkdownIt().enable("strikethrough").enable("table")


class TranscriptMarkdown(Markdown):
    elements: ClassVar = {
        **Markdown.elements,
        "heading_open": _LeftHeading,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
        "blockquote_open": _Quote,
        "list_item_open": _ListItem,
        "table_open": _WrappingTable,
        "image": _Image,
    }

    def __init__(self, text: str, first_code_block: int = 1) -> None:
        """`first_code_block`: the number of this text's first code block (a streamed
        answer is rendered in pieces; each goes on from the blocks before it)."""
        # What Rich's Markdown.__init__ sets, with the parser made once (tests/tui/test_markdown
        # fails when Rich's sets something else). Model output can carry escape sequences
        # (from a web page, a file): shown, not run.
        self.markup = visible(text, keep="\n\t")
        self.code_theme = self.inline_code_theme = "monokai"
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self._first_code_block = first_code_block
        tokens = self._parse()
        self._code_block_count = sum(1 for token in tokens if is_numbered(token))
        first = tokens[0] if tokens else None
        self._opens_with_a_blank_line = (
            first is not None
            and first.nesting == 1
            and first.type not in ("paragraph_open", "heading_open")
        )
        # Rich's Markdown renders `parsed`. The tokens wait for the first render, then go: a
        # kept block (a transcript keeps every block, to render it again at another width)
        # holds its text, not the ~40 tokens a paragraph parses into. Another render parses
        # again.
        self.parsed = tokens
        self._code_numbers: dict[int, int] = {}

    def _parse(self) -> list[Token]:
        tokens = _PARSER.parse(self.markup)
        _show_link_addresses(tokens)
        return tokens

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.parsed:
            self.parsed = self._parse()
        numbered = [token for token in self.parsed if is_numbered(token)]
        self._code_numbers = {
            id(token): self._first_code_block + n for n, token in enumerate(numbered)
        }
        try:
            yield from super().__rich_console__(console, options)
        finally:
            self.parsed = []
            self._code_numbers = {}

    @property
    def code_block_count(self) -> int:
        """How many of `/copy n`'s code blocks this text holds."""
        return self._code_block_count

    def code_block_number(self, token: Token) -> int | None:
        return self._code_numbers.get(id(token))

    @property
    def opens_with_a_blank_line(self) -> bool:
        """Rich's Markdown starts with a blank line when its first block holds others (a
        list, a quote, a table): the line that parts it from what came before."""
        return self._opens_with_a_blank_line
