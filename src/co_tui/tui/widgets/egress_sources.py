"""For the approval dialog: what the egress guard saw before an outbound call.

The untrusted content it may follow and the private sources it carries text from (one line
per source); what of the arguments is private text, marked in an excerpt of each argument
(percent-decoded when that is where it was found), and one line per carried part naming its
source and how it is encoded (base64, hex: found decoded, so not marked in the excerpt).
Hidden characters show as escapes. Renders nothing (and takes no room) for a request
without sources. A shell command that reaches the network only when approved with network
(`w`) has its sources shown as being about that choice. Styles: styles/egress.tcss.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import unquote_plus

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from co_tui.protocol.frontend import ApprovalRequest
from co_tui.tui.render.visible_text import visible_text

HIGHLIGHT_STYLE = "bold black on yellow"
MAX_SOURCES_SHOWN = 8
CONTEXT_CHARS = 40  # shown on each side of a marked part
MAX_EXCERPT_CHARS = 600  # of one argument


def marked_spans(value: str, highlights: Sequence[str]) -> list[tuple[int, int]]:
    """Every occurrence of every highlight in `value`, overlapping ones merged."""
    spans: list[tuple[int, int]] = []
    for part in highlights:
        if not part:
            continue
        start = value.find(part)
        while start != -1:
            spans.append((start, start + len(part)))
            start = value.find(part, start + 1)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _windows(length: int, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of the value to show: each mark with some context, nearby ones joined."""
    windows: list[tuple[int, int]] = []
    for start, end in spans:
        lo, hi = max(0, start - CONTEXT_CHARS), min(length, end + CONTEXT_CHARS)
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], hi)
        else:
            windows.append((lo, hi))
    return windows


def marked_text(value: str, highlights: Sequence[str]) -> Text:
    """An excerpt of `value` around the highlights, the highlights marked."""
    spans = marked_spans(value, highlights)
    windows = [(0, len(value))] if len(value) <= MAX_EXCERPT_CHARS else _windows(len(value), spans)
    text = Text()
    shown = 0
    for lo, hi in windows:
        if shown >= MAX_EXCERPT_CHARS:
            text.append(" …", style="dim")
            break
        hi = min(hi, lo + MAX_EXCERPT_CHARS - shown)
        if lo > 0:
            text.append("…", style="dim")
        cursor = lo
        for start, end in spans:
            if end <= lo or start >= hi:
                continue
            start, end = max(start, lo), min(end, hi)
            text.append_text(visible_text(value[cursor:start]))
            text.append_text(visible_text(value[start:end], style=HIGHLIGHT_STYLE))
            cursor = end
        text.append_text(visible_text(value[cursor:hi]))
        shown += hi - lo
        if hi < len(value):
            text.append("…", style="dim")
    return text


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def marked_arguments(args: dict[str, Any], highlights: Sequence[str]) -> Iterator[Text]:
    """One block per argument that holds a highlight (as sent, or percent-decoded)."""
    for name, raw in args.items():
        value = _shown(raw)
        forms = [("", value)]
        decoded = unquote_plus(value) if "%" in value or "+" in value else value
        if decoded != value:
            forms.append((" (decoded)", decoded))
        for suffix, form in forms:
            if marked_spans(form, highlights):
                block = Text()
                block.append_text(visible_text(f"{name}{suffix}: ", keep="", style="bold cyan"))
                block.append_text(marked_text(form, highlights))
                yield block
                break


def sources_text(sources: Sequence[str]) -> Text:
    text = Text()
    for label in sources[:MAX_SOURCES_SHOWN]:
        if text:
            text.append("\n")
        text.append("• ")
        text.append_text(visible_text(label, keep=""))
    if len(sources) > MAX_SOURCES_SHOWN:
        text.append(f"\n… and {len(sources) - MAX_SOURCES_SHOWN} more", style="dim")
    return text


class EgressSources(Vertical):
    """Mount in the approval dialog: `yield EgressSources(request, id="approval-egress")`."""

    def __init__(self, request: ApprovalRequest, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.request = request
        self.display = bool(request.sources)

    def compose(self) -> ComposeResult:
        r = self.request
        if not r.sources:
            return
        heading = "⚠ This sends data out while the conversation holds:"
        if not r.egress and r.network is not None:
            heading = "⚠ With network (w), this could send data out while the conversation holds:"
        yield Static(Text(heading, style="bold"), classes="egress-heading")
        yield Static(sources_text(r.sources), classes="egress-sources")
        blocks = list(marked_arguments(r.args, r.highlights))
        if blocks:
            yield Static(
                Text("Parts of what it sends that appear in that content:", style="bold"),
                classes="egress-heading",
            )
            for block in blocks:
                yield Static(block, classes="egress-outgoing")
        if r.carried:
            yield Static(
                Text("It carries private text you did not type:", style="bold"),
                classes="egress-heading",
            )
            yield Static(sources_text(r.carried), classes="egress-carried")
        if not blocks and not r.carried:
            yield Static(
                Text("None of that content was found in what it sends.", style="dim"),
                classes="egress-none",
            )
