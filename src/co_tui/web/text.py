"""Page text for the model: HTML to Markdown, and truncation. (The fence that marks it as
untrusted is applied to every request: co_tui.policy.fence.)"""

from __future__ import annotations

import re

# Elements that carry no page content, or content the model should never read as text.
_DROP_TAGS = ("script", "style", "noscript", "nav", "footer", "iframe", "svg", "template",
              "head", "form", "button")  # fmt: skip
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


def html_to_markdown(html: str) -> tuple[str, str]:
    """(markdown, title) of an HTML page, without scripts, styles, navigation and footers."""
    from bs4 import BeautifulSoup
    from markdownify import markdownify

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_DROP_TAGS):
        tag.decompose()
    body = soup.body or soup
    markdown = markdownify(str(body), heading_style="ATX", bullets="-", strip=["img"])
    return tidy(markdown), title


def tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip()


def truncate(text: str, max_chars: int) -> tuple[str, bool]:
    if len(text) <= max_chars:
        return text, False
    cut = text.rfind("\n", 0, max_chars)
    cut = cut if cut > max_chars * 0.8 else max_chars
    note = (
        f"\n\n[truncated: the page has {len(text):,} characters; only the first {cut:,} are shown]"
    )
    return text[:cut].rstrip() + note, True
