"""Which code blocks of an answer `/copy n` counts, in one place: the transcript labels each
such block with its number from here, so the number shown is the block `/copy n` copies.

A fenced block counts (``` or ~~~, at any depth: in a list, in a quote); an indented one does
not (a streamed answer is rendered in pieces, and a blank line inside an indented block would
make it two).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

_PARSER = MarkdownIt()  # CommonMark: fences are found as the transcript's parser finds them


def is_numbered(token: Token) -> bool:
    """Whether this block token of a parsed answer is one of `/copy n`'s code blocks."""
    return token.type == "fence"


def code_blocks(markdown: str) -> list[str]:
    """The code of each of `/copy n`'s code blocks of `markdown`, in order, without fences."""
    return [
        token.content.removesuffix("\n") for token in _PARSER.parse(markdown) if is_numbered(token)
    ]
