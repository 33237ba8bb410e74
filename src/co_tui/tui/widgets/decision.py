"""How an approval decision reads: one transcript line per decision (what, how it was
decided, and why), and the words a sub-agent's block uses for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from co_tui.safety.visible import visible
from co_tui.tui.render.visible_text import one_line

if TYPE_CHECKING:
    from co_tui.protocol.events import ApprovalRecord

# decision: (words, glyph, style). Automatic approvals stay quiet; the user's own decisions
# stand out, approve-all most of all (it covers every later call of the session).
DECISIONS = {
    "auto": ("auto-approved", "·", "dim"),
    "approve": ("you approved", "✓", "green"),
    "approve_network": ("you approved WITH NETWORK", "✓", "bold yellow"),
    "always_allow": ("you always allow", "✓", "green"),
    "approve_all": ("you approved ALL calls for this session, starting with", "✓✓", "bold yellow"),
    "deny": ("denied", "⊘", "magenta"),
}


def decision_words(record: ApprovalRecord) -> str:
    return DECISIONS.get(record.decision, (record.decision, "", ""))[0]


def approval_line(record: ApprovalRecord) -> Text:
    from co_tui.policy.approvals import key_argument  # pydantic-ai: after the first frame

    words, glyph, style = DECISIONS.get(record.decision, (record.decision, "·", ""))
    line = Text(f"{glyph} {words} ", style=style)
    line.append(visible(record.tool_name, keep=""), style=f"{style} bold")
    what = key_argument(record.tool_name, record.args)
    if what:
        line.append(" ")
        line.append_text(one_line(what, 60, style=style))
    if record.read_only:
        line.append(", read-only", style=style)
    line.append(f" — {visible(record.reason, keep='')}", style="dim")
    if record.feedback:  # plain already (protocol.frontend.feedback_words); made visible anyway
        line.append("\n  you said: ", style=style)
        line.append(f"“{visible(record.feedback, keep='')}”", style=f"{style} italic")
    return line
