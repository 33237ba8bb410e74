"""One line: provider and model, a sandbox warning, sandbox and isolation, its network, yolo,
tokens (turn and session), the context meter and cost, MCP servers, what waits in the jobs'
inbox, a passing note. What runs
now is the activity line's (tui/widgets/activity.py), not this bar's.

The bar shows one `SessionStatus` (session/status.py), a reactive the chat screen binds to
its own (`data_bind`): the bar follows the session without anyone calling it.

The line is fitted to the bar's width by priority: what needs the user's attention (a note
such as "retrying in 3s", a warning, yolo ON) is never cut; the
other fields shorten, then drop, the least useful first.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from co_tui.context.usage import format_window
from co_tui.session.status import SessionStatus

WARNING_CHARS = 40
SHORT_WARNING_CHARS = 20
MODEL_CHARS = 16
SEPARATOR = " │ "


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _headline(warning: str, chars: int = WARNING_CHARS) -> str:
    """The start of a warning (its details are in the transcript and /status)."""
    return _cut(warning.split(" (", 1)[0].split(":", 1)[0].strip(), chars)


@dataclass
class Field:
    """One field of the line: its forms, longest first; a field that may be dropped ends
    with an empty form. `rank`: lower ranks give way first."""

    forms: list[Text]
    rank: int
    form: int = 0

    @property
    def text(self) -> Text:
        return self.forms[self.form]

    def shrink(self) -> bool:
        if self.form + 1 >= len(self.forms):
            return False
        self.form += 1
        return True


def _fit(fields: list[Field], width: int) -> Text:
    def length() -> int:
        shown = [f.text for f in fields if f.text.cell_len]
        return sum(t.cell_len for t in shown) + len(SEPARATOR) * (len(shown) - 1) + 1

    for field in sorted(fields, key=lambda f: f.rank):
        while length() > width and field.shrink():
            pass
    line = Text(" ", no_wrap=True, overflow="ellipsis")
    first = True
    for field in fields:
        if not field.text.cell_len:
            continue
        if not first:
            line.append(SEPARATOR, style="dim")
        line.append_text(field.text)
        first = False
    return line


class StatusBar(Static):
    status: reactive[SessionStatus] = reactive(SessionStatus())

    def fields(self) -> list[Field]:
        """The line's fields in display order, each with its forms and rank."""
        s = self.status
        fields = [
            Field(
                [
                    Text(s.model, style="bold"),
                    Text(_cut(s.model, MODEL_CHARS), style="bold"),
                    Text(),
                ],
                rank=5,
            ),
        ]
        if s.warning:
            fields.append(
                Field(
                    [
                        Text(f"⚠ {_headline(s.warning)}", style="bold red"),
                        Text(f"⚠ {_headline(s.warning, SHORT_WARNING_CHARS)}", style="bold red"),
                    ],
                    rank=8,
                )
            )
        iso = Text(f"({s.isolation})", style="yellow" if s.isolation == "none" else "green")
        sandbox = Text(f"{s.sandbox} ").append_text(iso)
        fields.append(Field([Text("sandbox ").append_text(sandbox), sandbox, Text()], rank=4))
        # The network: shortened before the sandbox is, never dropped (it explains failing
        # commands); none without isolation, where "(none)" says that nothing is held back.
        if s.network == "none":
            fields.append(Field([Text("no network"), Text("no net")], rank=3))
        elif s.network:
            on = [Text("network on", style="yellow"), Text("net on", style="yellow")]
            fields.append(Field(on, rank=3))
        if s.approve_all:
            fields.append(Field([Text("yolo ON", style="bold red")], rank=9))
        else:
            fields.append(Field([Text("yolo off", style="dim"), Text()], rank=0))
        fields.append(Field(self._token_forms(), rank=2))
        if s.context_tokens:
            fields.append(Field(self._context_forms(), rank=6))
        if s.cost:
            fields.append(Field([Text(s.cost), Text()], rank=3))
        if s.mcp:
            mcp_style = "yellow" if "failed" in s.mcp else ""
            short = s.mcp.split(" (", 1)[0]
            fields.append(
                Field([Text(s.mcp, style=mcp_style), Text(short, style=mcp_style), Text()], rank=1)
            )
        if s.inbox:
            forms = [f"inbox {s.inbox} (/inbox)", f"inbox {s.inbox}"]
            fields.append(Field([Text(form, style="bold yellow") for form in forms], rank=7))
        if s.note:
            fields.append(Field([Text(s.note, style="bold yellow")], rank=10))
        return fields

    def _token_forms(self) -> list[Text]:
        turn, session = self.status.turn_tokens, self.status.session_tokens
        return [
            Text(f"turn {turn:,} tok · session {session:,} tok"),
            Text(f"{session:,} tok"),
            Text(),
        ]

    def _context_forms(self) -> list[Text]:
        status = self.status
        percent = status.context_percent
        if percent is None:
            return [Text(f"ctx {status.context_tokens:,} tok"), Text()]
        style = "bold red" if percent >= 90 else "yellow" if percent >= 75 else ""
        shown = f"{percent}%" if percent else "<1%"
        return [
            Text(f"ctx {shown} of {format_window(status.context_window)}", style=style),
            Text(f"ctx {shown}", style=style),
            Text(),
        ]

    def render(self) -> Text:
        return _fit(self.fields(), self.size.width or 80)
